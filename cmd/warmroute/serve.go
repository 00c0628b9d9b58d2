package main

import (
	"context"
	"io"

	"github.com/warmroute/warmroute/router"
)

func init() {
	register("serve", subcommand{
		summary: "run the ext_proc router (gRPC for Envoy, admin HTTP for metrics and health)",
		run:     runServe,
	})
}

func runServe(ctx context.Context, args []string, _, stderr io.Writer) error {
	cfg, logf, err := parseServeConfig(args, stderr)
	if err != nil {
		return err
	}
	r, err := router.New(cfg, logf.Logger(stderr))
	if err != nil {
		return err
	}
	return r.Run(ctx)
}
