// Package lldp is the fabricmap probe that finds the switch ports a node's uplinks reach by listening to LLDP.
//
// The probe decodes the LLDP frames switches send (every 30 s, customarily) from an AF_PACKET socket per
// uplink, or reads them from a pcap file, and keeps each neighbour for the TTL it announced. The package also
// parses lldpd's JSON, and can emit LLDP itself to emulate switches in tests and demos.
package lldp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/vishvananda/netns"

	"github.com/fabricmap/fabricmap/discovery"
)

// ProbeName is the name the probe registers under.
const ProbeName = "lldp"

// DefaultListen is how long a live Run listens when Settings.ListenSeconds is 0 (and --lldp-listen's
// default): a little more than the customary 30 s interval between a switch's frames.
const DefaultListen = 35 * time.Second

// rescanInterval is how often a started probe looks for uplinks it is not listening on yet.
const rescanInterval = time.Minute

// pcapInterface names the local interface of frames read from a capture that does not record one.
const pcapInterface = "pcap"

// Probe reports a node's LLDP neighbours. Each Run either reads Settings.Pcap, or listens live on the
// node's uplinks (Settings.Interfaces when set) for Settings.ListenSeconds; after Start, listeners keep
// running in the background and Run returns the current neighbours at once.
type Probe struct {
	sysfs    string // where the uplinks are looked up (the shared --sysfs-root)
	cfg      Settings
	table    *Table
	warnings warningLog

	mu        sync.Mutex
	started   bool
	listening map[string]bool // interfaces a background listener serves
	idle      string          // why a started probe has nothing to listen on
}

// New returns a probe with the settings s, finding the uplinks under shared.SysfsRoot.
func New(shared discovery.Config, s Settings) (*Probe, error) {
	if s.ListenSeconds < 0 {
		return nil, fmt.Errorf("LLDP listen time %d s is negative", s.ListenSeconds)
	}
	return &Probe{sysfs: shared.SysfsRoot, cfg: s, table: NewTable(nil), listening: map[string]bool{}}, nil
}

// Name returns "lldp".
func (p *Probe) Name() string { return ProbeName }

// Run reports the node's LLDP neighbours. Malformed frames become warnings naming the interface; a node with
// no interface to listen on is NotApplicable; failing to open any socket is an error. A live Run opens its
// sockets on the calling goroutine's OS thread, so a caller that locked its thread into a network namespace
// listens in that namespace.
func (p *Probe) Run(ctx context.Context) (discovery.Result, error) {
	if p.cfg.Pcap != "" {
		return p.runPcap()
	}
	p.mu.Lock()
	started, idle := p.started, p.idle
	p.mu.Unlock()
	if started {
		if idle != "" {
			return discovery.Result{NotApplicable: idle, Warnings: p.warnings.drain()}, nil
		}
		return p.result(), nil
	}
	return p.listenOnce(ctx)
}

// Changed receives a value when a started probe's listeners heard a neighbour appear, change or withdraw,
// so that the agent publishes it at once rather than at its next interval (discovery.Notifier).
func (p *Probe) Changed() <-chan struct{} { return p.table.Changed() }

// Start keeps listeners running until ctx ends, so that later Runs return the current neighbours at once.
// The first scan for interfaces happens before Start returns, in the network namespace of the calling OS
// thread; later scans, every minute, pick up uplinks that came up since, in that same namespace. Start fails
// when no LLDP socket can be opened; a node without uplinks is not an error (Run says NotApplicable).
func (p *Probe) Start(ctx context.Context) error {
	if p.cfg.Pcap != "" {
		return nil // a capture has nothing to listen to
	}
	p.mu.Lock()
	if p.started {
		p.mu.Unlock()
		return errors.New("LLDP probe already started")
	}
	p.started = true
	p.mu.Unlock()

	if err := p.startListeners(ctx); err != nil {
		p.mu.Lock()
		p.started = false
		p.mu.Unlock()
		return err
	}
	origin, err := netns.Get()
	if err != nil {
		p.warnings.add(fmt.Sprintf("LLDP rescans stay in their thread's network namespace: %v", err))
	}
	go p.rescan(ctx, origin)
	return nil
}

// rescan starts listeners on new interfaces every rescanInterval until ctx ends, from a thread in the network
// namespace Start was called in.
func (p *Probe) rescan(ctx context.Context, origin netns.NsHandle) {
	// Never unlocked: if the thread switched namespaces, it must die with this goroutine.
	runtime.LockOSThread()
	defer origin.Close()
	if origin.IsOpen() {
		if current, err := netns.Get(); err == nil {
			if !current.Equal(origin) {
				if err := netns.Set(origin); err != nil {
					p.warnings.add(fmt.Sprintf("LLDP rescans disabled: enter network namespace: %v", err))
					current.Close()
					return
				}
			}
			current.Close()
		}
	}
	ticker := time.NewTicker(rescanInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			if err := p.startListeners(ctx); err != nil {
				p.warnings.add(err.Error())
			}
		}
	}
}

// startListeners opens listeners on the interfaces not served yet and serves them until ctx ends.
func (p *Probe) startListeners(ctx context.Context) error {
	p.mu.Lock()
	serving := make(map[string]bool, len(p.listening))
	for name := range p.listening {
		serving[name] = true
	}
	p.mu.Unlock()

	listeners, idle, err := p.openListeners(serving)
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.listening) == 0 && len(listeners) == 0 {
		p.idle = idle
	}
	if err != nil {
		return err
	}
	for _, l := range listeners {
		name := l.Interface().Name
		p.listening[name] = true
		p.idle = ""
		go func() {
			if err := l.Serve(ctx, p.table, p.warnings.add); err != nil {
				p.warnings.add(err.Error())
			}
			p.mu.Lock()
			delete(p.listening, name)
			p.mu.Unlock()
		}()
	}
	return nil
}

// listenOnce listens on every interface for the configured time and reports what it heard.
func (p *Probe) listenOnce(ctx context.Context) (discovery.Result, error) {
	listeners, idle, err := p.openListeners(nil)
	if err != nil {
		return discovery.Result{}, err
	}
	if len(listeners) == 0 {
		return discovery.Result{NotApplicable: idle, Warnings: p.warnings.drain()}, nil
	}
	listenCtx, cancel := context.WithTimeout(ctx, p.listenTime())
	defer cancel()
	var wg sync.WaitGroup
	failed := make([]bool, len(listeners))
	for i, l := range listeners {
		wg.Go(func() {
			if err := l.Serve(listenCtx, p.table, p.warnings.add); err != nil {
				p.warnings.add(err.Error())
				failed[i] = true
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return discovery.Result{}, fmt.Errorf("LLDP listening interrupted: %w", err)
	}
	res := p.result()
	for _, f := range failed {
		if !f {
			return res, nil
		}
	}
	return discovery.Result{}, fmt.Errorf("every LLDP listener failed: %s", strings.Join(res.Warnings, "; "))
}

// listenTime is how long a live Run listens.
func (p *Probe) listenTime() time.Duration {
	if p.cfg.ListenSeconds == 0 {
		return DefaultListen
	}
	return time.Duration(p.cfg.ListenSeconds) * time.Second
}

// openListeners opens a listener on each interface to watch, except those in skip, on the calling
// goroutine's thread (and so in its network namespace). With nothing to open it says why in idle. It fails
// when it found interfaces but could open a socket on none of them.
func (p *Probe) openListeners(skip map[string]bool) (listeners []*Listener, idle string, err error) {
	names := p.cfg.Interfaces
	if len(names) == 0 {
		if names, err = Uplinks(p.sysfs); err != nil {
			return nil, "", err
		}
		if len(names) == 0 {
			return nil, "no uplink: no Ethernet device is up that is not loopback, virtual, or a bond or bridge member", nil
		}
	}
	var openErrs []error
	for _, name := range names {
		if skip[name] {
			continue
		}
		ifi, err := net.InterfaceByName(name)
		if err != nil {
			p.warnings.add(fmt.Sprintf("%s: %v", name, err))
			continue
		}
		l, err := OpenListener(ifi)
		if err != nil {
			openErrs = append(openErrs, err)
			p.warnings.add(err.Error())
			continue
		}
		listeners = append(listeners, l)
	}
	if len(listeners) == 0 && len(openErrs) > 0 && len(skip) == 0 {
		return nil, "", fmt.Errorf("no LLDP socket could be opened: %w", errors.Join(openErrs...))
	}
	return listeners, fmt.Sprintf("none of the LLDP interfaces %s exists", strings.Join(names, ", ")), nil
}

// runPcap reports the neighbours in the configured capture as they stood when its last frame was captured.
func (p *Probe) runPcap() (discovery.Result, error) {
	frames, err := ReadPcapFile(p.cfg.Pcap)
	if err != nil {
		return discovery.Result{}, err
	}
	if len(frames) == 0 {
		return discovery.Result{NotApplicable: fmt.Sprintf("capture %s holds no LLDP frame", p.cfg.Pcap)}, nil
	}
	var captureTime time.Time
	table := NewTable(func() time.Time { return captureTime })
	var warnings warningLog
	for _, f := range frames {
		if f.Timestamp.After(captureTime) {
			captureTime = f.Timestamp
		}
		table.ObserveFrame(p.captureInterface(f), f.Data, warnings.add)
	}
	return toResult(table.Sightings(), warnings.drain()), nil
}

// captureInterface names the local interface of a captured frame: the one the capture records, else the
// single configured LLDP interface, else "pcap".
func (p *Probe) captureInterface(f CapturedFrame) string {
	switch {
	case f.Interface != "":
		return f.Interface
	case len(p.cfg.Interfaces) == 1:
		return p.cfg.Interfaces[0]
	default:
		return pcapInterface
	}
}

// result reports the probe's table and the warnings since the last report.
func (p *Probe) result() discovery.Result {
	return toResult(p.table.Sightings(), p.warnings.drain())
}

// toResult converts sorted sightings into a probe result.
func toResult(sightings []Sighting, warnings []string) discovery.Result {
	res := discovery.Result{Warnings: warnings}
	for _, s := range sightings {
		res.Neighbors = append(res.Neighbors, s.Neighbor.LinkNeighbor(s.Interface))
	}
	return res
}
