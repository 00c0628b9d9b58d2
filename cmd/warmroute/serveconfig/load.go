package serveconfig

import (
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

// Load reads the YAML (or JSON) file at path strictly: an unknown or
// duplicate key is an error, so a misspelt setting never silently means its
// default. Defaults are not applied; call WithDefaults after flags.
func Load(path string) (Config, error) {
	var cfg Config
	b, err := os.ReadFile(path)
	if err != nil {
		return cfg, fmt.Errorf("reading config: %w", err)
	}
	if err := yaml.UnmarshalStrict(b, &cfg); err != nil {
		return cfg, fmt.Errorf("parsing config %s: %w", path, err)
	}
	return cfg, nil
}
