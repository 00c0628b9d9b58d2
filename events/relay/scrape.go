package relay

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/wire"
)

// Engine gauges read from /metrics, vLLM's and SGLang's names for the same
// three quantities (SGLang's token_usage is the used share of its KV token
// pool, as vLLM's kv_cache_usage_perc is of its blocks). Engines label them
// per model and engine; the relay sums the series of each name, so one
// scrape setting serves either engine.
const (
	gaugeRunning = "vllm:num_requests_running"
	gaugeWaiting = "vllm:num_requests_waiting"
	gaugeKVUsage = "vllm:kv_cache_usage_perc"

	sglangRunning = "sglang:num_running_reqs"
	sglangWaiting = "sglang:num_queue_reqs"
	sglangKVUsage = "sglang:token_usage"
)

// maxScrapeBytes bounds how much of a /metrics response is read.
const maxScrapeBytes = 4 << 20

// scraper reads the engine's load gauges. It is safe for concurrent use.
type scraper struct {
	url    string
	client *http.Client
}

// newScraper returns nil when url is empty (scraping disabled).
func newScraper(url string, timeout time.Duration) *scraper {
	if url == "" {
		return nil
	}
	return &scraper{url: url, client: &http.Client{Timeout: timeout}}
}

func (s *scraper) scrape(ctx context.Context) (api.EngineLoad, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return api.EngineLoad{}, fmt.Errorf("scraping engine metrics: %w", err)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return api.EngineLoad{}, fmt.Errorf("scraping engine metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return api.EngineLoad{}, fmt.Errorf("scraping engine metrics: status %d", resp.StatusCode)
	}
	load, err := parseEngineLoad(io.LimitReader(resp.Body, maxScrapeBytes))
	load.ScrapedAt = time.Now()
	return load, err
}

// parseEngineLoad reads the three gauges from Prometheus text exposition.
// It fails when none of them is present, which usually means the URL does
// not point at a vLLM or SGLang server.
func parseEngineLoad(r io.Reader) (api.EngineLoad, error) {
	var load api.EngineLoad
	found := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, v, ok := parseSample(sc.Text())
		if !ok {
			continue
		}
		switch name {
		case gaugeRunning, sglangRunning:
			load.Running += v
		case gaugeWaiting, sglangWaiting:
			load.Waiting += v
		case gaugeKVUsage, sglangKVUsage:
			load.KVCacheUsage = max(load.KVCacheUsage, v)
		default:
			continue
		}
		found = true
	}
	if err := sc.Err(); err != nil {
		return load, fmt.Errorf("parsing engine metrics: %w", err)
	}
	if !found {
		return load, fmt.Errorf("parsing engine metrics: none of %s, %s, %s (or SGLang's %s, %s, %s) found: %w",
			gaugeRunning, gaugeWaiting, gaugeKVUsage, sglangRunning, sglangWaiting, sglangKVUsage, wire.ErrMalformed)
	}
	return load, nil
}

// parseSample splits `name{labels} value [timestamp]`; comments and
// malformed lines report !ok.
func parseSample(line string) (name string, v float64, ok bool) {
	line = strings.TrimSpace(line)
	if line == "" || line[0] == '#' {
		return "", 0, false
	}
	end := strings.IndexAny(line, "{ ")
	if end <= 0 {
		return "", 0, false
	}
	name, rest := line[:end], line[end:]
	if rest[0] == '{' {
		close := strings.LastIndexByte(rest, '}')
		if close < 0 {
			return "", 0, false
		}
		rest = rest[close+1:]
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return "", 0, false
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return "", 0, false
	}
	return name, v, true
}
