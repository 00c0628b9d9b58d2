//go:build !race

package scorer

// raceEnabled says the race detector instruments this build.
const raceEnabled = false
