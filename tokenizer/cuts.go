package tokenizer

// cutSafe reports whether encoding may be split at added-token boundaries:
// text after a boundary then encodes the same alone as inside the whole
// text. A single_word token looks at the rune before its match, which a
// split would hide, so its presence disables splitting.
func (t *Tokenizer) cutSafe() bool {
	for _, a := range t.added {
		if a.SingleWord {
			return false
		}
	}
	return true
}

// appendCuts appends the byte offsets in text where an added-token segment
// ends. Each is a safe split point: the segmentation before it does not
// depend on what follows, and the segmentation after it restarts there.
// Normalized tokens count only when there is no normalizer, since the
// raw text is then what they are matched against.
func (t *Tokenizer) appendCuts(cuts []int, text string, st *encodeState) []int {
	st.segs = t.raw.split(text, st.segs[:0])
	for _, sg := range st.segs {
		if sg.isToken {
			cuts = append(cuts, sg.end)
			continue
		}
		if t.norm != nil || len(t.normd.tokens) == 0 {
			continue
		}
		st.nsegs = t.normd.split(text[sg.start:sg.end], st.nsegs[:0])
		for _, ns := range st.nsegs {
			if ns.isToken {
				cuts = append(cuts, sg.start+ns.end)
			}
		}
	}
	return cuts
}
