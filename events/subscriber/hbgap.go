package subscriber

import "github.com/warmroute/warmroute/api"

// checkHeartbeatSeq syncs a Source whose relay's heartbeats name a later
// sequence than the router applied, twice in a row with the same number: a
// lost last batch, which no later batch would reveal (an idle engine sends
// none). Twice, because a heartbeat can overtake the batch just before it
// (they arrive on different subscriptions); a busy stream names a new
// sequence each heartbeat, and its losses show as gaps in the batches.
// Only for a relay with a mirror, on the epoch the router holds. Apply loop
// only.
func (s *Subscriber) checkHeartbeatSeq(src Source, st *streamState, h api.Heartbeat) {
	behind := h.Seq != nil && h.Epoch != 0 && h.Epoch == st.epoch && st.inOrder && *h.Seq >= st.expect &&
		!st.syncing && s.replacer != nil
	if !behind {
		st.ahead = false
		return
	}
	if st.ahead && st.aheadSeq == *h.Seq {
		st.ahead = false
		s.requestSync(src, st, syncGap, false)
		return
	}
	st.ahead, st.aheadSeq = true, *h.Seq
}
