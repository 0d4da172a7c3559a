package ufm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// checkRetry retries connection errors, 429 and 5xx answers (but 501), as retryablehttp's policy does, and
// never a 401 or 403 (rejected credentials do not get better by asking again, and retrying could lock the
// account) nor a refused redirect (ErrRedirectRefused). The error it gives is the reason of the last failure,
// for the message when retries run out.
func checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if err == nil && resp != nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		return false, nil
	}
	if errors.Is(err, ErrRedirectRefused) {
		return false, err // the same redirect again would be refused again
	}
	retry, why := retryablehttp.ErrorPropagatedRetryPolicy(ctx, resp, err)
	if retry && why == nil && err == nil && resp != nil {
		why = fmt.Errorf("HTTP %s", resp.Status)
	}
	return retry, why
}

// retryPolicy is how long to wait before the next attempt.
type retryPolicy struct {
	// maxRetryAfter caps the wait a Retry-After header asks for (Config.MaxRetryAfter).
	maxRetryAfter time.Duration
	// now is the clock a Retry-After date is read against.
	now func() time.Time
}

// backoff waits as a 429 or 503 answer's Retry-After header asks, at most maxRetryAfter, otherwise
// exponentially from min to max with jitter: a random wait between half and all of min·2^attempt, so that
// several clients do not retry in step. It has retryablehttp's Backoff signature.
func (p retryPolicy) backoff(min, max time.Duration, attempt int, resp *http.Response) time.Duration {
	if resp != nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
		if d, ok := retryAfter(resp.Header.Get("Retry-After"), p.now()); ok {
			return minDuration(d, p.maxRetryAfter)
		}
	}
	d := min
	for i := 0; i < attempt && d < max; i++ {
		d *= 2
	}
	if d > max || d <= 0 {
		d = max
	}
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d/2+1)
}

// minDuration is the built-in min, which the parameter names of backoff hide.
func minDuration(a, b time.Duration) time.Duration { return min(a, b) }

// retryAfter reads a Retry-After header: delay seconds or an HTTP date. Delays too large for a Duration
// come out as the largest one.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		return time.Duration(min(secs, int64(math.MaxInt64/time.Second))) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// retryLog adapts slog to retryablehttp's leveled logger. A failed attempt that will be retried is a
// warning, not an error; retryablehttp logs URLs without user information and never headers, and the
// client puts credentials in headers only.
type retryLog struct{ l *slog.Logger }

func (r retryLog) Error(msg string, kv ...any) { r.l.Warn("UFM "+msg, kv...) }
func (r retryLog) Info(msg string, kv ...any)  { r.l.Info("UFM "+msg, kv...) }
func (r retryLog) Debug(msg string, kv ...any) { r.l.Debug("UFM "+msg, kv...) }
func (r retryLog) Warn(msg string, kv ...any)  { r.l.Warn("UFM "+msg, kv...) }
