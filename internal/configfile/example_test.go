package configfile_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/warmroute/warmroute/internal/configfile"
)

func ExampleDecode() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "router.yaml")
	os.WriteFile(path, []byte("listen: :8080\ntimeouts:\n  read: 5s\n  raed: 5s\n"), 0o600)
	var cfg struct {
		Listen   string `json:"listen"`
		Timeouts struct {
			Read string `json:"read"`
		} `json:"timeouts"`
	}
	err := configfile.Decode(path, &cfg)
	fmt.Println(strings.ReplaceAll(err.Error(), dir+string(os.PathSeparator), ""))
	// Output: parsing config router.yaml:4: unknown field "timeouts.raed"
}
