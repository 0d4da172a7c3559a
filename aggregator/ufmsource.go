package aggregator

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/fabricmap/fabricmap/sources/ufm"
	"github.com/fabricmap/fabricmap/topology"
)

// UFMSource is NVIDIA UFM as a FabricSource: the whole InfiniBand fabric (hosts, switches, cables) read through
// its REST API. An answer without a single switch is refused, so a UFM that lost its fabric view (or answers
// garbage that parses) never empties the tree; the last good answer stays in use.
type UFMSource struct {
	// Client reads UFM.
	Client *ufm.Client
	// PollTimeout bounds one poll's requests, retries and Retry-After waits (the conversion of a fabric read in
	// time is not cut short); DefaultPollTimeout when zero.
	PollTimeout time.Duration
	// Options maps hosts to node names and HCAs to compute or storage.
	Options ufm.Options
	// Log receives the hosts UFM knows but no node name was found for.
	Log *slog.Logger
}

// Name implements FabricSource.
func (s *UFMSource) Name() string { return ufm.Source }

// pollTimeout makes the aggregator's poll deadline --ufm-poll-timeout.
func (s *UFMSource) pollTimeout() time.Duration { return s.PollTimeout }

// Evidence implements FabricSource.
func (s *UFMSource) Evidence(ctx context.Context) (topology.Input, error) {
	f, err := s.Client.Fabric(ctx)
	if err != nil {
		return topology.Input{}, err
	}
	in, report := ufm.Evidence(f, s.Options)
	if len(in.Nodes) == 0 && len(in.SwitchLinks) == 0 {
		return topology.Input{}, errors.New("UFM answered a fabric with no host cabled to a switch; keeping the last good one")
	}
	if len(report.Unmapped) > 0 && s.Log != nil {
		names := make([]string, 0, min(len(report.Unmapped), 20))
		for _, u := range report.Unmapped[:min(len(report.Unmapped), 20)] {
			names = append(names, u.String())
		}
		s.Log.Info("UFM hosts without a Kubernetes node name", "count", len(report.Unmapped), "first", names)
	}
	return in, nil
}
