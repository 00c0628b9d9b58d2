package router

import (
	"log/slog"
	"maps"
	"slices"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/inferencepool"
	"github.com/warmroute/warmroute/scorer"
)

// The watcher hands roles only to a sink that takes them.
var _ inferencepool.RoleSink = (*poolSink)(nil)

// SetRoleLabels gives the pool's members the prefill/decode roles of their
// pods' llm-d.ai/role labels. A member whose label names no role this
// router knows (an "encode" worker, a typo) is kept out of the pool, with a
// warning, rather than sent work it may not do; its cached state is
// forgotten as if it had left.
func (s *poolSink) SetRoleLabels(labels map[string]string) {
	roles := map[string]scorer.Role{}
	refused := map[string]bool{}
	for _, ep := range slices.Sorted(maps.Keys(labels)) {
		r, err := scorer.RoleOf(labels[ep])
		if err != nil {
			refused[ep] = true
			if !s.refused[ep] {
				s.logger().Warn("pod role label unknown: endpoint left out of the pool", "pool", s.name,
					"endpoint", ep, "label", api.RoleLabel, "err", err)
				s.Left(ep)
			}
			continue
		}
		roles[ep] = r
	}
	s.refused = refused
	s.pools.SetRoles(s.name, roles)
}

// admitted returns eps without the members refused for their role label.
func (s *poolSink) admitted(eps []string) []string {
	if len(s.refused) == 0 {
		return eps
	}
	return slices.DeleteFunc(slices.Clone(eps), func(ep string) bool { return s.refused[ep] })
}

func (s *poolSink) logger() *slog.Logger {
	if s.log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.log
}
