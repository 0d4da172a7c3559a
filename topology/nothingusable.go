package topology

import "errors"

// ErrNothingUsable is wrapped by the error of a source that answered but gave nothing to build on (a capture
// without a switch, a UFM without a host cabled to a switch, no Node with every label key, no instance the
// cloud places). The aggregator keeps the source's last good evidence; `fabricmap topology` names the source
// by its flag and value and says why.
var ErrNothingUsable = errors.New("nothing usable")
