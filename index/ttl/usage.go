package ttl

import "github.com/warmroute/warmroute/index"

// Usage reports a response's prompt and cached token counts (the OpenAI
// usage.prompt_tokens_details.cached_tokens; known is false when the
// response carried none, which vLLM also does when nothing was cached, so
// absence is judged unknown rather than a miss). For a route that used a
// prediction it counts whether the engine held the predicted blocks and, if
// not, the predicted tokens it had to prefill. Other decisions are ignored.
func (c *Controller) Usage(id index.DecisionID, promptTokens, cachedTokens int, known bool) {
	sh := c.shard(id)
	sh.mu.Lock()
	d := sh.byID[id]
	if d == nil || !d.usageWait {
		sh.mu.Unlock()
		return
	}
	d.usageWait = false
	if !d.lifeOpen {
		delete(sh.byID, id)
	}
	sh.mu.Unlock()
	res, lost := judgeUsage(&d.route, promptTokens, cachedTokens, known && cachedTokens >= 0)
	d.s.m.routes[res].Inc()
	if lost > 0 {
		d.s.m.falseWarm.Add(float64(lost))
	}
}
