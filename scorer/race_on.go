//go:build race

package scorer

// raceBuild says the race detector instruments this build (see quarantine).
const raceBuild = true
