package ibnetdiscover

import (
	"time"

	"github.com/fabricmap/fabricmap/ib"
)

// sweepCache keeps the tool's last sweep, so that the subnet is swept at most once per interval. Only
// successes are kept; a failure is never cached, so the next run tries again.
type sweepCache struct {
	fabric *ib.Fabric
	warns  []ib.Warning
	at     time.Time
}

// get returns the cached sweep when it is younger than interval at now.
func (c *sweepCache) get(now time.Time, interval time.Duration) (*ib.Fabric, []ib.Warning, bool) {
	if c.fabric == nil || interval <= 0 || now.Sub(c.at) >= interval {
		return nil, nil, false
	}
	return c.fabric, c.warns, true
}

func (c *sweepCache) keep(now time.Time, f *ib.Fabric, w []ib.Warning) {
	*c = sweepCache{fabric: f, warns: w, at: now}
}
