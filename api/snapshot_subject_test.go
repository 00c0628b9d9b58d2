package api

import (
	"errors"
	"testing"
)

func TestSnapshotSubject(t *testing.T) {
	subj, err := SnapshotSubject("org/m.v1", "10.0.0.1:8000", 3)
	if err != nil || subj != "warmroute.snap.v1.org%2Fm%2Ev1.10%2E0%2E0%2E1%3A8000.3" {
		t.Fatalf("SnapshotSubject = %q, %v", subj, err)
	}
	wild, err := SnapshotWildcard("org/m.v1", "10.0.0.1:8000")
	if err != nil || wild != "warmroute.snap.v1.org%2Fm%2Ev1.10%2E0%2E0%2E1%3A8000.*" {
		t.Fatalf("SnapshotWildcard = %q, %v", wild, err)
	}
	if rank, err := ParseSnapshotRank(subj); err != nil || rank != 3 {
		t.Fatalf("ParseSnapshotRank = %d, %v", rank, err)
	}
	for _, bad := range []string{"warmroute.snap.v1.m.e.x", "warmroute.snap.v1.m.e.-1", "warmroute.kv.v1.m.e.0", ""} {
		if _, err := ParseSnapshotRank(bad); !errors.Is(err, ErrBadSubject) {
			t.Errorf("ParseSnapshotRank(%q) = %v, want ErrBadSubject", bad, err)
		}
	}
	if _, err := SnapshotSubject("m", "e", -1); !errors.Is(err, ErrBadSubject) {
		t.Errorf("negative rank: %v", err)
	}
	if _, err := SnapshotSubject("", "e", 0); !errors.Is(err, ErrBadSubject) {
		t.Errorf("empty model: %v", err)
	}
}
