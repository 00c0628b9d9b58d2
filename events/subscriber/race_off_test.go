//go:build !race

package subscriber

const raceEnabled = false
