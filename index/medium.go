package index

import "strings"

// Medium is the storage tier a confirmed block lives on. A block on a slower
// tier still saves prefill, but less, so Lookup weighs it by Options.Weights.
type Medium uint8

// Media, in the order engines name them. MediumOther covers connector-specific
// tiers so an unknown name never fails an event.
const (
	MediumGPU Medium = iota
	MediumCPU
	MediumStorage
	MediumOther
	numMedia
)

// ParseMedium maps an event's medium string to a Medium. vLLM leaves the
// medium unset for its own GPU cache, so the empty string means GPU.
// SGLang names its tiers GPU, CPU_PINNED (host memory), DISK and EXTERNAL
// (a shared remote pool, read back like storage).
func ParseMedium(s string) Medium {
	// The names engines send, as they send them, without ToUpper's scan:
	// ingestion parses one per event.
	switch s {
	case "", "GPU":
		return MediumGPU
	case "CPU", "CPU_PINNED":
		return MediumCPU
	}
	switch strings.ToUpper(s) {
	case "", "GPU", "CUDA", "HBM":
		return MediumGPU
	case "CPU", "CPU_TIER", "CPU_PINNED", "DRAM":
		return MediumCPU
	case "STORAGE", "DISK", "SSD", "NVME", "EXTERNAL":
		return MediumStorage
	}
	return MediumOther
}

// String names the medium for logs and metric labels (a bounded set).
func (m Medium) String() string {
	switch m {
	case MediumGPU:
		return "gpu"
	case MediumCPU:
		return "cpu"
	case MediumStorage:
		return "storage"
	}
	return "other"
}

// Weights holds, per medium, how much a confirmed block on it is worth in
// Match.Weighted, between 0 and 1.
type Weights [numMedia]float64

// DefaultWeights values a block by roughly how much of a recompute it saves:
// GPU blocks are used in place, CPU blocks must be copied back, storage blocks
// read back from disk or the network.
var DefaultWeights = Weights{MediumGPU: 1, MediumCPU: 0.8, MediumStorage: 0.5, MediumOther: 0.5}

// refs counts a holder's copies of one block per medium. Counts saturate at
// 255: an engine holding more copies of one block than that is not plausible,
// and saturating keeps the entry at 12 bytes.
type refs [numMedia]uint8

func (r refs) total() int {
	return int(r[0]) + int(r[1]) + int(r[2]) + int(r[3])
}

func (r *refs) add(m Medium) {
	if r[m] < 255 {
		r[m]++
	}
}

// remove drops one copy on m; it reports false when there was none to drop.
func (r *refs) remove(m Medium) bool {
	if r[m] == 0 {
		return false
	}
	r[m]--
	return true
}

// best returns the highest weight among the media holding a copy.
func (r refs) best(w *Weights) float64 {
	b := 0.0
	for m, n := range r {
		if n > 0 && w[m] > b {
			b = w[m]
		}
	}
	return b
}
