package ib

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/fabricmap/fabricmap/ib/ibtest"
)

// The SuperPOD-like fixture (testdata/superpod.txt) is written by ibtest.SuperPOD. Regenerate it with
//
//	FABRICMAP_REGEN_FIXTURES=1 go test -run TestSuperPODFixtureUpToDate ./ib/
//
// Without the variable the test checks that the committed file is what the generator writes.

const superPODFixture = "testdata/superpod.txt"

// spu is the fixture's shape: a rail-optimised, two-level fat tree of 2 scalable units.
var spu = ibtest.SuperPOD()

// superPOD renders the fixture's fabric in ibnetdiscover's default output format.
func superPOD(t testing.TB) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := spu.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestSuperPODFixtureUpToDate(t *testing.T) {
	want := superPOD(t)
	if os.Getenv("FABRICMAP_REGEN_FIXTURES") == "1" {
		if err := os.WriteFile(filepath.FromSlash(superPODFixture), want, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", superPODFixture, len(want))
		return
	}
	got, err := os.ReadFile(filepath.FromSlash(superPODFixture))
	if err != nil {
		t.Fatalf("%v (regenerate with FABRICMAP_REGEN_FIXTURES=1)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: regenerate with FABRICMAP_REGEN_FIXTURES=1", superPODFixture)
	}
	if len(got) > 500<<10 {
		t.Fatalf("%s is %d bytes, over the 500 KiB budget", superPODFixture, len(got))
	}
}
