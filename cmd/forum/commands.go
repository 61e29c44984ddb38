package main

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/forum-mcp/forum/api"
	"github.com/forum-mcp/forum/ingest/probe"
	"github.com/forum-mcp/forum/ingest/registry"
)

func newMigrateCmd() *cobra.Command {
	cfg := &config{}
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Create or upgrade the store's tables",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			a, err := openApp(ctx, cfg, withStore)
			if err != nil {
				return err
			}
			defer a.close()
			fmt.Fprintln(os.Stderr, "store is at the latest schema")
			return nil
		},
	}
	cfg.bindCommon(cmd.Flags())
	cfg.bindStore(cmd.Flags())
	return cmd
}

// captureTime finds a file's capture time: a MANIFEST.tsv beside it, else a
// date in its name, else now.
func captureTime(path string) time.Time {
	if files, err := registry.ListSnapshots(filepath.Dir(path)); err == nil {
		for _, f := range files {
			if filepath.Base(f.Path) == filepath.Base(path) {
				return f.CapturedAt
			}
		}
	}
	return time.Now().UTC().Truncate(time.Second)
}

func newOpenAPICmd() *cobra.Command {
	return &cobra.Command{
		Use:   "openapi",
		Short: "Print the OpenAPI 3.1 document",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, h := api.New(api.Options{Routes: api.DocumentRoutes()})
			b, err := json.MarshalIndent(h.OpenAPI(), "", "  ")
			if err != nil {
				return err
			}
			fmt.Println(string(b))
			return nil
		},
	}
}

func newProbeCmd() *cobra.Command {
	pf := &probeFlags{}
	var transport, server string
	cmd := &cobra.Command{
		Use:   "probe URL",
		Short: "Probe one MCP endpoint and print the check as JSON",
		Long: `probe runs the same MCP handshake the hourly probers run (initialize,
notifications/initialized, tools/list with paging; legacy SSE when asked) against
one URL and prints the check: outcome, latency, HTTP status, transport used,
auth evidence (WWW-Authenticate, RFC 9728 metadata), server info, protocol
version and tools. Loopback, private and link-local addresses are refused
unless --probe-allow names them.

Examples:
  forum probe https://mcp.example.com/mcp
  forum probe --transport sse https://mcp.example.com/sse
  forum probe --probe-allow 127.0.0.0/8 http://127.0.0.1:3000/mcp`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if transport != probe.TransportStreamableHTTP && transport != probe.TransportSSE {
				return usageError{fmt.Errorf("--transport: want streamable-http or sse, got %q", transport)}
			}
			log, err := (&config{LogLevel: "warn", LogFormat: "console"}).logger()
			if err != nil {
				return err
			}
			var allow []netip.Prefix
			for _, c := range pf.allow {
				pfx, err := netip.ParsePrefix(c)
				if err != nil {
					return usageError{fmt.Errorf("--probe-allow %q: %w", c, err)}
				}
				allow = append(allow, pfx)
			}
			p := probe.New(probe.WithTimeout(pf.timeout), probe.WithPerHostLimit(pf.perHost), probe.WithAllow(allow...), probe.WithLogger(log.Named("prober")))
			defer p.Close()
			c := p.Probe(cmd.Context(), probe.Request{Server: server, URL: args[0], Transport: transport})
			b, _ := json.MarshalIndent(c, "", "  ")
			fmt.Println(string(b))
			fmt.Fprintf(os.Stderr, "%s: %s (%s) in %.0f ms, %d tools\n", args[0], c.Outcome, c.AuthKind, c.DurationMS, len(c.Tools))
			return nil
		},
	}
	cmd.Flags().StringVar(&transport, "transport", probe.TransportStreamableHTTP, "streamable-http or sse")
	cmd.Flags().StringVar(&server, "server", "", "registry name to record on the check")
	pf.bind(cmd.Flags())
	return cmd
}
