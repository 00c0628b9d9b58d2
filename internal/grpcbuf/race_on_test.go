//go:build race

package grpcbuf

const raceEnabled = true
