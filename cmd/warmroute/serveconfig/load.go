package serveconfig

import (
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

// Load reads the YAML (or JSON) file at path with Parse.
func Load(path string) (Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("reading config: %w", err)
	}
	return Parse(b, path)
}

// Parse decodes a configuration file's bytes strictly: an unknown or
// duplicate key is an error, so a misspelt setting never silently means its
// default. name is used in errors. Defaults are not applied; call
// WithDefaults after flags.
func Parse(data []byte, name string) (Config, error) {
	var cfg Config
	if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
		return Config{}, fmt.Errorf("parsing config %s: %w", name, err)
	}
	return cfg, nil
}
