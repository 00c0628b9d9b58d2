package extproc

// learnResponseID returns the hook that tells the decision a Responses
// response was stored under id, so a later request naming it as
// previous_response_id reaches the same engine (scorer.Affinity); nil when
// the request is not a Responses request or asked not to store.
func (st *stream) learnResponseID() func(id string, stored bool) {
	if dialectOf(st.path) != dialectResponses || !st.store || st.decision == nil {
		return nil
	}
	d := st.decision
	return func(id string, stored bool) {
		if stored {
			d.ResponseStored(id)
		}
	}
}
