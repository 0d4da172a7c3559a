/*
 * A stand-in libnvidia-ml.so.1 for machines without an NVIDIA GPU: it exports the NVML calls that fabricmap's
 * nvml probe makes, with NVML's own C declarations and structures (nvml.h from the go-nvml module, given with
 * -I at build time), and answers them from a fixture file instead of a driver. The agent binary loads it
 * through go-nvml's dlopen exactly as it loads the real library, so the whole cgo path runs, including the
 * versioned calls that go-nvml's Go mocks cannot reach.
 *
 * The fixture is named by $FABRICMAP_FAKE_NVML_GPUS: one GPU a line,
 *   uuid|model name|PCI bus id|NUMA node|fabric cluster UUID (32 hex digits, or - for none)|clique id|NVLinks
 * A GPU without a cluster UUID answers the fabric calls with NOT_SUPPORTED, as an H100 does; its NVLinks (if
 * any) end at NVSwitches. Lines starting with # are comments.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvml.h"

#define MAX_GPUS 64

struct nvmlDevice_st {
	char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
	char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
	char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
	int numa;
	int hasFabric;
	unsigned char cluster[NVML_GPU_FABRIC_UUID_LEN];
	unsigned int clique;
	unsigned int nvlinks;
};

static struct nvmlDevice_st gpus[MAX_GPUS];
static unsigned int ngpus;
static int initialised;

static int hexval(char c) {
	if (c >= '0' && c <= '9') return c - '0';
	if (c >= 'a' && c <= 'f') return c - 'a' + 10;
	if (c >= 'A' && c <= 'F') return c - 'A' + 10;
	return -1;
}

/* load reads the fixture; a missing or malformed one fails initialisation, as a broken driver would. */
static nvmlReturn_t load(void) {
	const char *path = getenv("FABRICMAP_FAKE_NVML_GPUS");
	if (path == NULL) return NVML_ERROR_DRIVER_NOT_LOADED;
	FILE *f = fopen(path, "r");
	if (f == NULL) return NVML_ERROR_DRIVER_NOT_LOADED;
	char line[512];
	ngpus = 0;
	while (fgets(line, sizeof line, f) != NULL) {
		if (line[0] == '#' || line[0] == '\n') continue;
		if (ngpus == MAX_GPUS) break;
		struct nvmlDevice_st *g = &gpus[ngpus];
		char cluster[64];
		memset(g, 0, sizeof *g);
		if (sscanf(line, "%79[^|]|%95[^|]|%31[^|]|%d|%63[^|]|%u|%u", g->uuid, g->name, g->busId, &g->numa, cluster,
		           &g->clique, &g->nvlinks) != 7) {
			fclose(f);
			return NVML_ERROR_UNKNOWN;
		}
		if (strcmp(cluster, "-") != 0) {
			if (strlen(cluster) != 2 * NVML_GPU_FABRIC_UUID_LEN) { fclose(f); return NVML_ERROR_UNKNOWN; }
			for (int i = 0; i < NVML_GPU_FABRIC_UUID_LEN; i++) {
				int hi = hexval(cluster[2 * i]), lo = hexval(cluster[2 * i + 1]);
				if (hi < 0 || lo < 0) { fclose(f); return NVML_ERROR_UNKNOWN; }
				g->cluster[i] = (unsigned char)(hi << 4 | lo);
			}
			g->hasFabric = 1;
		}
		ngpus++;
	}
	fclose(f);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlInit_v2(void) {
	nvmlReturn_t ret = load();
	if (ret == NVML_SUCCESS) initialised++;
	return ret;
}

nvmlReturn_t nvmlInitWithFlags(unsigned int flags) {
	(void)flags;
	return nvmlInit_v2();
}

nvmlReturn_t nvmlShutdown(void) {
	if (initialised == 0) return NVML_ERROR_UNINITIALIZED;
	initialised--;
	return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t result) {
	switch (result) {
	case NVML_SUCCESS: return "Success";
	case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
	case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
	case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
	case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
	case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
	case NVML_ERROR_ARGUMENT_VERSION_MISMATCH: return "Argument version mismatch";
	default: return "Unknown Error";
	}
}

/* go-nvml's nvml.h wraps the handle pointer in a one-member struct, which the C ABI passes as the pointer. */
static nvmlReturn_t check(nvmlDevice_t device) {
	struct nvmlDevice_st *d = device.handle;
	if (initialised == 0) return NVML_ERROR_UNINITIALIZED;
	if (d == NULL || d < gpus || d >= gpus + ngpus) return NVML_ERROR_INVALID_ARGUMENT;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) {
	if (initialised == 0) return NVML_ERROR_UNINITIALIZED;
	if (count == NULL) return NVML_ERROR_INVALID_ARGUMENT;
	*count = ngpus;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device) {
	if (initialised == 0) return NVML_ERROR_UNINITIALIZED;
	if (index >= ngpus || device == NULL) return NVML_ERROR_INVALID_ARGUMENT;
	device->handle = &gpus[index];
	return NVML_SUCCESS;
}

static nvmlReturn_t copyString(char *dst, unsigned int length, const char *src) {
	if (dst == NULL) return NVML_ERROR_INVALID_ARGUMENT;
	if (strlen(src) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
	strcpy(dst, src);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length) {
	struct nvmlDevice_st *d = device.handle;
	nvmlReturn_t ret = check(device);
	return ret != NVML_SUCCESS ? ret : copyString(uuid, length, d->uuid);
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length) {
	struct nvmlDevice_st *d = device.handle;
	nvmlReturn_t ret = check(device);
	return ret != NVML_SUCCESS ? ret : copyString(name, length, d->name);
}

static void fillPci(nvmlPciInfo_t *pci, const char *busId) {
	memset(pci, 0, sizeof *pci);
	snprintf(pci->busId, sizeof pci->busId, "%s", busId);
	snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%s", busId);
	sscanf(busId, "%x:%x:%x", &pci->domain, &pci->bus, &pci->device);
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci) {
	struct nvmlDevice_st *d = device.handle;
	nvmlReturn_t ret = check(device);
	if (ret != NVML_SUCCESS) return ret;
	if (pci == NULL) return NVML_ERROR_INVALID_ARGUMENT;
	fillPci(pci, d->busId);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNumaNodeId(nvmlDevice_t device, unsigned int *node) {
	struct nvmlDevice_st *d = device.handle;
	nvmlReturn_t ret = check(device);
	if (ret != NVML_SUCCESS) return ret;
	if (node == NULL) return NVML_ERROR_INVALID_ARGUMENT;
	if (d->numa < 0) return NVML_ERROR_NOT_SUPPORTED;
	*node = (unsigned int)d->numa;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGpuFabricInfo(nvmlDevice_t device, nvmlGpuFabricInfo_t *info) {
	struct nvmlDevice_st *d = device.handle;
	nvmlReturn_t ret = check(device);
	if (ret != NVML_SUCCESS) return ret;
	if (info == NULL) return NVML_ERROR_INVALID_ARGUMENT;
	if (!d->hasFabric) return NVML_ERROR_NOT_SUPPORTED;
	memcpy(info->clusterUuid, d->cluster, sizeof info->clusterUuid);
	info->status = NVML_SUCCESS;
	info->cliqueId = d->clique;
	info->state = NVML_GPU_FABRIC_STATE_COMPLETED;
	return NVML_SUCCESS;
}

/* The versioned call fills version 2 or 3 of the structure, as the caller's version field asks. */
nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device, nvmlGpuFabricInfoV_t *info) {
	struct nvmlDevice_st *d = device.handle;
	nvmlReturn_t ret = check(device);
	if (ret != NVML_SUCCESS) return ret;
	if (info == NULL) return NVML_ERROR_INVALID_ARGUMENT;
	if (info->version != nvmlGpuFabricInfo_v2 && info->version != nvmlGpuFabricInfo_v3)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	if (!d->hasFabric) return NVML_ERROR_NOT_SUPPORTED;
	/* Versions 2 and 3 share their first fields; only version 3 has the trailing healthSummary. */
	nvmlGpuFabricInfo_v2_t *v2 = (nvmlGpuFabricInfo_v2_t *)info;
	memcpy(v2->clusterUuid, d->cluster, sizeof v2->clusterUuid);
	v2->status = NVML_SUCCESS;
	v2->cliqueId = d->clique;
	v2->state = NVML_GPU_FABRIC_STATE_COMPLETED;
	v2->healthMask = 0;
	if (info->version == nvmlGpuFabricInfo_v3) info->healthSummary = 0;
	return NVML_SUCCESS;
}

/* checkLink answers a per-link call the way NVML does: a link past the GPU's last one is not supported. */
static nvmlReturn_t checkLink(nvmlDevice_t device, unsigned int link, const void *out) {
	nvmlReturn_t ret = check(device);
	if (ret != NVML_SUCCESS) return ret;
	if (out == NULL || link >= NVML_NVLINK_MAX_LINKS) return NVML_ERROR_INVALID_ARGUMENT;
	if (link >= device.handle->nvlinks) return NVML_ERROR_NOT_SUPPORTED;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link, nvmlEnableState_t *isActive) {
	nvmlReturn_t ret = checkLink(device, link, isActive);
	if (ret != NVML_SUCCESS) return ret;
	*isActive = NVML_FEATURE_ENABLED;
	return NVML_SUCCESS;
}

/* Every NVLink ends at an NVSwitch (one per two links, on bus 0x8X), as on HGX and GB200 trays. */
nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link, nvmlPciInfo_t *pci) {
	nvmlReturn_t ret = checkLink(device, link, pci);
	if (ret != NVML_SUCCESS) return ret;
	char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
	snprintf(busId, sizeof busId, "00000000:%02X:00.0", 0x80 + link / 2);
	fillPci(pci, busId);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t device, unsigned int link, nvmlIntNvLinkDeviceType_t *type) {
	nvmlReturn_t ret = checkLink(device, link, type);
	if (ret != NVML_SUCCESS) return ret;
	*type = NVML_NVLINK_DEVICE_TYPE_SWITCH;
	return NVML_SUCCESS;
}
