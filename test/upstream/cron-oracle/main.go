// The cron oracle: answers, one JSON line per JSON line on stdin, what robfig/cron v3 (ESO's parser for
// ExternalSecret syncWindows: Minute|Hour|Dom|Month|Dow|Descriptor, in UTC) says of a schedule: whether
// it parses (robfig's error text), its next firing after `at`, and whether a window of `duration` is open
// at `at` (ESO's isWithinSyncWindow, copied from pkg/controllers/externalsecret).
package main

import (
	"bufio"
	"encoding/json"
	"os"
	"time"

	robfigcron "github.com/robfig/cron/v3"
)

type request struct {
	Schedule string `json:"schedule"`
	Duration string `json:"duration"`
	// Milliseconds since the epoch.
	At int64 `json:"at"`
}

type answer struct {
	Error  string `json:"error,omitempty"`
	Next   *int64 `json:"next,omitempty"`
	Active *bool  `json:"active,omitempty"`
}

var parser = robfigcron.NewParser(robfigcron.Minute | robfigcron.Hour | robfigcron.Dom | robfigcron.Month | robfigcron.Dow | robfigcron.Descriptor)

func isWithinSyncWindow(sched robfigcron.Schedule, duration time.Duration, at time.Time) bool {
	prev := sched.Next(at.Add(-duration - time.Second))
	return !prev.IsZero() && !prev.After(at) && !at.After(prev.Add(duration))
}

func main() {
	time.Local = time.UTC
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var req request
		var a answer
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			a.Error = "bad request: " + err.Error()
		} else if sched, err := parser.Parse(req.Schedule); err != nil {
			a.Error = err.Error()
		} else {
			at := time.UnixMilli(req.At).UTC()
			if n := sched.Next(at); !n.IsZero() {
				ms := n.UnixMilli()
				a.Next = &ms
			}
			if req.Duration != "" {
				d, err := time.ParseDuration(req.Duration)
				if err != nil {
					a.Error = err.Error()
				} else {
					active := isWithinSyncWindow(sched, d, at)
					a.Active = &active
				}
			}
		}
		_ = out.Encode(a)
	}
}
