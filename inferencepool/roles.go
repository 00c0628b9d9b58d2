package inferencepool

// RoleSink is a Sink that also takes its members' prefill/decode roles:
// the api.RoleLabel (llm-d.ai/role) value of every member whose pod carries
// one, handed over before each SetMembers and whenever a label changes.
// The watcher passes the values through unparsed; the sink judges them.
type RoleSink interface {
	Sink
	SetRoleLabels(labels map[string]string)
}
