package sources

import (
	"time"

	"github.com/socialcrawl/crawler/sources/ratecontrol"
)

// The client's rate control lives in package ratecontrol; these names keep
// the shared-quota API (package pipeline's PostgreSQL sharer) on Client.
type (
	// QuotaSharer shares one key's quota between processes.
	QuotaSharer = ratecontrol.Sharer
	// SharedQuota is the view of a key's quota shared by the processes.
	SharedQuota = ratecontrol.SharedQuota
	// QuotaEstimate is what one process has measured of the key's quota.
	QuotaEstimate = ratecontrol.Estimate
)

// SetQuotaSharer makes this client share its key's quota through s. Set
// it before the first request.
func (c *Client) SetQuotaSharer(s QuotaSharer) { c.control.SetSharer(s) }

// PauseShared pauses every worker of this client for d from now, as a 429
// of another process sharing the key did (QuotaSharer.Paused); the rate
// is re-estimated when the pause ends, as after a 429 of its own.
func (c *Client) PauseShared(d time.Duration) { c.control.Pause(d) }
