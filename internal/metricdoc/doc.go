// Package metricdoc checks, in a package's tests, that the metrics the package
// registers are exactly the ones its README documents.
//
// # README format
//
// The README has a "## Metrics" section whose first table is:
//
//	## Metrics
//
//	| name | type | labels | meaning |
//	|---|---|---|---|
//	| `warmroute_index_entries` | gauge | `kind` | entries in the index by kind |
//	| `warmroute_x_latency_seconds` | histogram | `endpoint`, `model` | ... |
//	| `warmroute_x_total` | counter |  | ... |
//
// name is the registered family name in backticks (histograms and summaries
// without their _bucket, _sum and _count suffixes); type is one of counter,
// gauge, histogram or summary; labels are the variable label names, each in
// backticks and separated by commas, in any order, and the cell is empty
// when there are none; meaning is free text. Text may follow the table once a
// line does not start with "|". A name may appear in one row only.
//
// # What is compared
//
// [Check] registers the package's metrics on a fresh registry through a
// Registerer that records every collector, then asks each collector for its
// descriptors, so metric vectors without children count as well as custom
// collectors. A family's type comes from its concrete client_golang type
// (CounterVec, GaugeVec, HistogramVec, SummaryVec) or, for other collectors,
// from the samples they Collect: a custom collector must therefore emit at
// least one sample per family when Check collects it, and the register
// function should give it the state to do so.
package metricdoc
