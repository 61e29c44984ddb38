package main

// Every component of the pipeline (internal/component/all); run, process,
// serve, replay and ingest choose from that one list by role.
import _ "github.com/forum-mcp/forum/internal/component/all"
