//go:build race

package scorer

const raceEnabled = true
