// Package affinity keeps, per pool, which endpoint stored each Responses
// response (vLLM keeps a stored response in the memory of the process that
// produced it), so that a request naming it as previous_response_id is
// routed there (scorer.Affinity). The table is bounded in entries
// (Limits.MaxEntries per pool, oldest evicted first) and in age
// (Config.MaxAge); it knows when it is complete, that is when every response
// stored within MaxAge is in it (the router has run for MaxAge, or a replay
// covered MaxAge, and evicted nothing for room since), which is when an unknown id can be answered as
// not found rather than routed on load.
//
// A Share publishes this replica's ids over NATS (api.AffinitySubject) and
// records every other replica's, so any replica routes a follow-up that
// another one learnt. With EnableReplay (JetStream), the server retains the
// ids in a stream that a starting Share replays, moving the table's window
// back to what the stream covers, so a restarted replica's table can be
// complete at once.
//
// # Concurrency
//
// A Store is safe for concurrent use: one mutex over all pools, held only
// for map and queue updates. A Share owns one goroutine (the publish loop)
// between Start and Close; the NATS handler records into the Store directly.
//
// # Ownership
//
// A Share borrows the *nats.Conn it is built with; the caller closes it after
// Close.
package affinity
