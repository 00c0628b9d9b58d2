package main

import (
	"fmt"
	"io"
	"text/template"

	"github.com/warmroute/warmroute/e2e/harness"
)

var welcome = template.Must(template.New("welcome").Parse(`
warmroute demo is running. Send a chat completion through Envoy:

  curl -si {{.Envoy.URL "/v1/chat/completions"}} \
    -H 'content-type: application/json' \
    -d '{"model": "{{.Model}}", "messages": {{.Messages}}}'

The x-warmroute-served-by header names the simulator that answered, and
x-warmroute-decision explains the router's choice: basis=speculative when it
routed on its own prediction, basis=confirmed once the simulator's KV events
arrived. In the answer, usage.prompt_tokens_details.cached_tokens counts the
prompt tokens that simulator already held in its prefix cache: send the same
request again to see it routed to the warm one.

  Envoy admin:      http://{{.Envoy.AdminAddr}}/   (stats: /stats?filter=ext_proc)
  router metrics:   {{.Router.MetricsURL}}
  router readiness: http://{{.Router.AdminAddr}}/readyz
  router TTL report: http://{{.Router.DebugAddr}}/debug/ttl   (debug address, loopback)
{{- range .Sims}}
  {{.ID}} metrics:    http://{{.Addr}}/metrics
{{- end}}
  logs:             {{.Dir}}

Press Ctrl-C to stop.
`))

// demoMessages is the printed request's conversation: long enough to fill a
// few KV blocks, so a repeat can be routed on its cached prefix.
const demoMessages = `[{"role": "system", "content": "You are a concise assistant for an infrastructure team that runs large language models behind Envoy. Answer in two sentences."}, {"role": "user", "content": "Tell me about prefix caching."}]`

func printWelcome(w io.Writer, st *harness.Stack, dir string) {
	err := welcome.Execute(w, struct {
		*harness.Stack
		Model, Dir, Messages string
	}{st, model, dir, demoMessages})
	if err != nil {
		fmt.Fprintln(w, "printing instructions:", err)
	}
}
