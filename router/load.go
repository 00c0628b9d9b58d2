package router

import (
	"github.com/warmroute/warmroute/internal/configfile"
)

// Load reads the YAML (or JSON) file at path with Parse's rules.
func Load(path string) (Config, error) {
	var cfg Config
	err := configfile.Decode(path, &cfg)
	return cfg, err
}

// Parse decodes a configuration file's bytes strictly: an unknown or
// duplicate key, or a value of the wrong type, is an error naming the file
// and line, so a misspelt setting never silently means its default. name is
// the file's name in errors. Defaults are not applied; call WithDefaults
// after flags.
func Parse(data []byte, name string) (Config, error) {
	var cfg Config
	err := configfile.DecodeBytes(data, name, &cfg)
	return cfg, err
}
