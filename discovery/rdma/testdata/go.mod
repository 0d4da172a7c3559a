// The sysfs fixture trees here have ':' in their names (pci0000:15, 0000:18:00.0), which Go module zips
// forbid. This go.mod makes the directory a module of its own, so the fabricmap module zip omits it instead
// of being invalid. Nothing builds here.
module github.com/fabricmap/fabricmap/discovery/rdma/testdata

go 1.26
