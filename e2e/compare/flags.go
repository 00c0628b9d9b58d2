package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
)

// config is the command line.
type config struct {
	Requests    int           `json:"requestsPerRun"`
	Turns       int           `json:"turns"`
	AgentTurns  int           `json:"agentTurns"`
	Tools       int           `json:"agentTools"`
	Workers     int           `json:"workers"`
	Systems     int           `json:"systemPrompts"`
	SystemWords int           `json:"systemWords"`
	Words       int           `json:"messageWords"`
	Think       time.Duration `json:"thinkMax"`
	FailRate    float64       `json:"failRate"`
	Seed        uint64        `json:"seed"`
	Sims        int           `json:"sims"`
	Deadline    time.Duration `json:"deadline"`
	Quick       bool          `json:"quick"`
	Scenarios   []string      `json:"scenarios"`
	Policies    []string      `json:"policies"`
	jsonPath    string
	keepLogs    bool
	minSamples  int
	tune        adaptiveTuning
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	var scs, pols string
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&c.Requests, "requests", 480, "requests per run (scenario x policy)")
	fs.IntVar(&c.Turns, "turns", 4, "turns per conversation")
	fs.IntVar(&c.AgentTurns, "agent-turns", 8, "turns per agent conversation (the agents scenario)")
	fs.IntVar(&c.Tools, "tools", 4, "tools per agent kind (the agents scenario)")
	fs.IntVar(&c.Workers, "workers", 6, "conversations in flight at once")
	fs.IntVar(&c.Systems, "systems", 4, "system prompts shared across users")
	fs.IntVar(&c.SystemWords, "system-words", 300, "words per system prompt")
	fs.IntVar(&c.Words, "words", 40, "words per user message and per assistant reply")
	fs.DurationVar(&c.Think, "think", 50*time.Millisecond, "longest think time between turns")
	fs.Float64Var(&c.FailRate, "fail-rate", 0.02, "share of turns whose first attempt fails in prefill and is retried")
	fs.Uint64Var(&c.Seed, "seed", 1, "workload seed")
	fs.IntVar(&c.Sims, "sims", 3, "simulators")
	fs.DurationVar(&c.Deadline, "deadline", 14*time.Minute, "total deadline; rows finished by then are still printed")
	fs.BoolVar(&c.Quick, "quick", false, "a small run for tests: 36 requests of 3 turns, 3 workers, short prompts")
	fs.StringVar(&scs, "scenarios", "", "comma-separated scenarios (default all: fast,slow,bursty,silent,mixed,cut,relays-down,agents)")
	fs.StringVar(&pols, "policies", "", "comma-separated policies (default all: "+strings.Join(policyNames, ",")+")")
	fs.StringVar(&c.jsonPath, "json", "", "also write the results as JSON to this file")
	fs.BoolVar(&c.keepLogs, "keep-logs", false, "keep every run's configs and logs")
	fs.IntVar(&c.minSamples, "min-samples", 50, "TTL controller minSamples (confirmations before advice, resolved blocks before trust)")
	fs.DurationVar(&c.tune.Interval, "adaptive-interval", time.Second, "adaptive TTL recompute interval")
	fs.DurationVar(&c.tune.Step, "adaptive-step", 250*time.Millisecond, "adaptive TTL largest move per interval")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("%w: unexpected arguments %q", errBadFlag, fs.Args())
	}
	c.Scenarios, c.Policies = split(scs), split(pols)
	if c.Quick {
		c.quick(fs)
	}
	return c, c.validate()
}

// quick shrinks every sizing flag the user did not set.
func (c *config) quick(fs *flag.FlagSet) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	small := map[string]func(){
		"requests": func() { c.Requests = 36 }, "turns": func() { c.Turns = 3 }, "agent-turns": func() { c.AgentTurns = 4 },
		"workers": func() { c.Workers = 3 }, "systems": func() { c.Systems = 2 },
		"system-words": func() { c.SystemWords = 120 }, "words": func() { c.Words = 20 },
		"min-samples": func() { c.minSamples = 10 },
	}
	for name, f := range small {
		if !set[name] {
			f()
		}
	}
}

func (c *config) validate() error {
	for _, v := range []struct {
		name string
		n    int
	}{{"requests", c.Requests}, {"turns", c.Turns}, {"agent-turns", c.AgentTurns}, {"tools", c.Tools}, {"workers", c.Workers}, {"systems", c.Systems},
		{"system-words", c.SystemWords}, {"words", c.Words}, {"sims", c.Sims}, {"min-samples", c.minSamples}} {
		if v.n <= 0 {
			return fmt.Errorf("%w: -%s must be positive, got %d", errBadFlag, v.name, v.n)
		}
	}
	for _, d := range []struct {
		name string
		d    time.Duration
	}{{"deadline", c.Deadline}, {"adaptive-interval", c.tune.Interval}, {"adaptive-step", c.tune.Step}} {
		if d.d <= 0 {
			return fmt.Errorf("%w: -%s must be positive, got %s", errBadFlag, d.name, d.d)
		}
	}
	if c.FailRate < 0 || c.FailRate >= 1 || c.FailRate != c.FailRate {
		return fmt.Errorf("%w: -fail-rate must be in [0,1), got %g", errBadFlag, c.FailRate)
	}
	if c.Think < 0 {
		return fmt.Errorf("%w: -think must not be negative, got %s", errBadFlag, c.Think)
	}
	if _, err := findScenarios(c.Scenarios); err != nil {
		return err
	}
	_, err := findPolicies(c.Policies)
	return err
}

// spec is the workload the flags describe: enough conversations for at
// least Requests requests.
func (c config) spec() workloadSpec {
	return workloadSpec{Seed: c.Seed, Conversations: (c.Requests + c.Turns - 1) / c.Turns, Turns: c.Turns,
		Systems: c.Systems, SystemWords: c.SystemWords, MessageWords: c.Words, ThinkMax: c.Think, FailRate: c.FailRate}
}

// agentSpec is the agent workload the flags describe: as many requests as
// the completions workload, in conversations of -agent-turns turns, one
// agent kind per system prompt.
func (c config) agentSpec() agentSpec {
	return agentSpec{Seed: c.Seed, Conversations: (c.Requests + c.AgentTurns - 1) / c.AgentTurns, Turns: c.AgentTurns,
		Systems: c.Systems, SystemWords: c.SystemWords, Tools: c.Tools, MessageWords: c.Words, ThinkMax: c.Think,
		FailRate: c.FailRate}
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
