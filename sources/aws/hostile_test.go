package aws

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fabricmap/fabricmap/sources/aws/awstest"
	"github.com/fabricmap/fabricmap/sources/cloudsource"
)

// TestHostileAnswersRefused: an answer past a limit fails the poll (so the aggregator keeps the last good
// evidence and counts the error) with an error naming the limit and what passed it, and is not asked for
// again: a page past the body cap, an ID past the string cap (never hashed into a name), a page token that
// comes back (never a silent end with Nodes "not in the answer").
func TestHostileAnswersRefused(t *testing.T) {
	fixture := awstest.Fixture()
	huge := strings.Repeat("n", 1000)
	withNode := func(i int, nn ...string) []awstest.Instance {
		out := awstest.Instances(fixture)
		out[i].NetworkNodes = nn
		return out
	}
	tests := []struct {
		name      string
		instances []awstest.Instance
		setup     func(*awstest.EC2)
		err       []string // parts of the error
		requests  int
	}{{
		name: "a page past the body cap", setup: func(e *awstest.EC2) { e.Pad(cloudsource.MaxBodyBytes + 1) },
		err:      []string{"aws: the answer to POST http://127.0.0.1:", "is larger than 16 MiB: the answer is refused"},
		requests: 1,
	}, {
		name: "a 100 MB page", setup: func(e *awstest.EC2) { e.Pad(100 << 20) },
		err:      []string{"is larger than 16 MiB"},
		requests: 1,
	}, {
		name:      "a network node ID past the string cap",
		instances: withNode(0, "nn-t1", huge, "nn-b1"),
		err: []string{"DescribeInstanceTopology of 14 instances (i-0000000000000a001…), page 1: aws: the network node of layer 2 of i-0000000000000a001 is 1000 bytes, " +
			"over the limit of 256 bytes: the answer is refused"},
		requests: 1,
	}, {
		name:      "an instance type past the string cap",
		instances: func() []awstest.Instance { out := awstest.Instances(fixture); out[3].Type = huge; return out }(),
		err:       []string{"aws: instanceType of i-0000000000000a004 is 1000 bytes"},
		requests:  1,
	}, {
		name:      "more layers than any instance type has",
		instances: withNode(0, strings.Split("a b c d e f g h i", " ")...),
		err:       []string{"aws: instance i-0000000000000a001 has 9 network nodes, over the limit of 8: the answer is refused"},
		requests:  1,
	}, {
		name: "a page token that comes back", setup: func(e *awstest.EC2) { e.SetPageSize(2); e.RepeatTokens(true) },
		err: []string{"DescribeInstanceTopology of 14 instances (i-0000000000000a001…): page 2 gave the page token page 1 gave (\"page-2\"): " +
			"the listing would go round: the answer is refused"},
		requests: 2,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, url := standIn(t, cmpOr(tc.instances, awstest.Instances(fixture))...)
			if tc.setup != nil {
				tc.setup(e)
			}
			s, _ := newSource(t, url, awstest.Nodes(fixture), func(o *Options) { o.MaxAttempts = 3 })
			_, err := s.Evidence(context.Background())
			if err == nil {
				t.Fatal("the poll succeeded, want the answer refused")
			}
			for _, want := range tc.err {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %v, want one with %q", err, want)
				}
			}
			if !errors.Is(err, cloudsource.ErrRefused) {
				t.Errorf("error %v is no cloudsource.ErrRefused", err)
			}
			if n := len(e.Requests()); n != tc.requests {
				t.Errorf("%d requests, want %d (a refused answer is not asked for again): %v", n, tc.requests, err)
			}
		})
	}
}

// cmpOr returns a unless it is empty, else b.
func cmpOr[T any](a, b []T) []T {
	if len(a) > 0 {
		return a
	}
	return b
}
