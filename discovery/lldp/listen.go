package lldp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/mdlayher/packet"
	"golang.org/x/sys/unix"
)

// EtherType is LLDP's ethertype.
const EtherType = 0x88cc

const (
	// readBufferSize holds the largest (jumbo) frame an interface may deliver.
	readBufferSize = 9216 + ethernetHeaderLen + dot1QTagLen
	// netDownBackoff is how long a listener waits before reading again after its interface went down.
	netDownBackoff = time.Second
)

// Listener receives LLDP frames on one interface through an AF_PACKET socket.
type Listener struct {
	ifi  *net.Interface
	conn *packet.Conn
}

// OpenListener opens an AF_PACKET socket on ifi bound to LLDP's ethertype and joins the nearest-bridge
// multicast group, so that NICs which filter multicast still deliver LLDP. The socket lives in the network
// namespace of the calling OS thread. It needs CAP_NET_RAW.
func OpenListener(ifi *net.Interface) (*Listener, error) {
	conn, err := packet.Listen(ifi, packet.Raw, EtherType, nil)
	if err != nil {
		return nil, fmt.Errorf("open LLDP socket on %s: %w", ifi.Name, err)
	}
	if err := conn.JoinGroup(NearestBridge); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("join LLDP multicast group on %s: %w", ifi.Name, err)
	}
	return &Listener{ifi: ifi, conn: conn}, nil
}

// Interface is the interface the listener receives on.
func (l *Listener) Interface() *net.Interface { return l.ifi }

// Close closes the socket; a running Serve returns.
func (l *Listener) Close() error { return l.conn.Close() }

// Serve reads frames until ctx ends, decoding each into table. Problems with single frames (malformed,
// unknown subtypes, …) go to warn, prefixed with the interface name. Serve closes the socket when it returns;
// it returns nil when ctx ended and an error when the socket failed.
func (l *Listener) Serve(ctx context.Context, table *Table, warn func(string)) error {
	defer l.conn.Close()
	// A read deadline in the past wakes the blocked read as soon as ctx ends.
	stop := context.AfterFunc(ctx, func() { _ = l.conn.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()

	buf := make([]byte, readBufferSize)
	for {
		n, _, err := l.conn.ReadFrom(buf)
		if ctx.Err() != nil {
			return nil
		}
		switch {
		case errors.Is(err, unix.ENETDOWN):
			// The link went down; the socket works again once it is back up.
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(netDownBackoff):
			}
			continue
		case err != nil:
			return fmt.Errorf("read LLDP on %s: %w", l.ifi.Name, err)
		}
		l.handle(buf[:n], table, warn)
	}
}

// handle records one received frame in table, ignoring the frames the interface itself sent.
func (l *Listener) handle(frame []byte, table *Table, warn func(string)) {
	if len(frame) >= ethernetHeaderLen && bytes.Equal(frame[6:12], l.ifi.HardwareAddr) {
		return
	}
	table.ObserveFrame(l.ifi.Name, frame, warn)
}
