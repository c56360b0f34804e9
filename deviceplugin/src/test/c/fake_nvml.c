/*
 * A stand-in for libnvidia-ml.so.1 with fixed data, so the nvidia plugin's FFM binding is tested for real
 * on machines without a GPU. Declarations follow nvml.h (types, struct layouts, return codes); behaviour is
 * the minimum the plugin relies on. Control functions (fake_nvml_*) let a test inject events, switch MIG
 * mode and check that the plugin released what it took.
 *
 * GPU 0: Tesla T4, everything supported, not MIG capable.
 * GPU 1: A100, power usage NOT_SUPPORTED; MIG mode off until fake_nvml_set_mig(1), then two 3g.20gb MIG
 *        devices (GPU instances 1 and 2).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>

typedef int nvmlReturn_t;
enum {
    NVML_SUCCESS = 0, NVML_ERROR_UNINITIALIZED = 1, NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3, NVML_ERROR_NOT_FOUND = 6, NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_DRIVER_NOT_LOADED = 9, NVML_ERROR_TIMEOUT = 10, NVML_ERROR_GPU_IS_LOST = 15,
    NVML_ERROR_UNKNOWN = 999
};

typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct { unsigned int version; unsigned long long total, reserved, free, used; } nvmlMemory_v2_t;
#define NVML_ERROR_FUNCTION_NOT_FOUND 13
#define NVML_ERROR_ARGUMENT_VERSION_MISMATCH 25
typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;

struct fake_dev {
    const char *uuid, *name, *busId;
    unsigned long long memTotal, memUsed;
    int powerLimitMw;           /* < 0: NOT_SUPPORTED */
    int powerUsageMw;           /* < 0: NOT_SUPPORTED */
    int tempC, utilGpu, utilMem;
    int smClock, memClock, maxSmClock, maxMemClock;  /* < 0: NOT_SUPPORTED */
    int ccMajor, ccMinor;
    long long eccCorrected, eccUncorrected;          /* < 0: NOT_SUPPORTED */
    int migCapable;
    int isMig, gpuInstanceId;
    struct fake_dev *parent;
    unsigned long long registered;                   /* event mask */
    int lost;                                        /* fell off the bus */
};
typedef struct fake_dev *nvmlDevice_t;

typedef struct nvmlEventSet_st { int live; } *nvmlEventSetHandle;
typedef struct { nvmlEventSetHandle handle; } nvmlEventSet_t;
typedef struct {
    nvmlDevice_t device;
    unsigned long long eventType, eventData;
    unsigned int gpuInstanceId, computeInstanceId;
} nvmlEventData_t;

#define MIB (1024ULL * 1024ULL)
static struct fake_dev gpus[2] = {
    { "GPU-11111111-2222-3333-4444-555555555555", "Tesla T4", "00000000:00:1E.0",
      15360 * MIB, 2048 * MIB, 70000, 31500, 48, 37, 12, 1590, 5000, 1590, 5001, 7, 5, 2, 0, 0, 0, 0, NULL, 0, 0 },
    { "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", "NVIDIA A100-SXM4-40GB", "00000000:00:1F.0",
      40960 * MIB, 0, 400000, -1, 31, 0, 0, 1410, 1215, 1410, 1215, 8, 0, 0, 0, 1, 0, 0, NULL, 0, 0 },
};
static struct fake_dev migs[2] = {
    { "MIG-0aaaaaaa-1111-2222-3333-444444444444", "NVIDIA A100-SXM4-40GB MIG 3g.20gb", "00000000:00:1F.0",
      19968 * MIB, 13 * MIB, -1, -1, -1, -1, -1, -1, -1, -1, -1, 8, 0, -1, -1, 0, 1, 1, &gpus[1], 0, 0 },
    { "MIG-0bbbbbbb-1111-2222-3333-444444444444", "NVIDIA A100-SXM4-40GB MIG 3g.20gb", "00000000:00:1F.0",
      19968 * MIB, 13 * MIB, -1, -1, -1, -1, -1, -1, -1, -1, -1, 8, 0, -1, -1, 0, 1, 2, &gpus[1], 0, 0 },
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t arrived = PTHREAD_COND_INITIALIZER;
static int initCount;
static int initResult = NVML_SUCCESS;
static int migEnabled;
static int liveEventSets;
/* nvmlDeviceGetMemoryInfo_v2: 1 as in R510 and later; 0 a library without it; 2 one that knows another version */
static int memoryV2 = 1;
#define QUEUE 64
static nvmlEventData_t queue[QUEUE];
static int queued;

static int valid(nvmlDevice_t d) {
    return d == &gpus[0] || d == &gpus[1] || (migEnabled && (d == &migs[0] || d == &migs[1]));
}
#define CHECK_INIT() do { if (initCount == 0) return NVML_ERROR_UNINITIALIZED; } while (0)
#define CHECK_DEV(d) do { CHECK_INIT(); if (!valid(d)) return NVML_ERROR_INVALID_ARGUMENT; } while (0)

static nvmlReturn_t copy(char *out, unsigned int length, const char *value) {
    if (strlen(value) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
    strcpy(out, value);
    return NVML_SUCCESS;
}

/* ---- control ---- */
void fake_nvml_set_init_result(int rc) { initResult = rc; }
void fake_nvml_set_mig(int enabled) { migEnabled = enabled; }
void fake_nvml_set_memory_v2(int mode) { memoryV2 = mode; }
void fake_nvml_set_lost(int index, int lost) { gpus[index].lost = lost; }
int fake_nvml_init_count(void) { return initCount; }
int fake_nvml_live_event_sets(void) { return liveEventSets; }
/* Queues an event on GPU `index` (0 or 1) as the driver would deliver it. */
void fake_nvml_inject_event(int index, unsigned long long type, unsigned long long data, unsigned int gpuInstance) {
    pthread_mutex_lock(&lock);
    if (queued < QUEUE) {
        nvmlEventData_t e = { &gpus[index], type, data, gpuInstance, 0xFFFFFFFFu };
        queue[queued++] = e;
        pthread_cond_broadcast(&arrived);
    }
    pthread_mutex_unlock(&lock);
}

/* ---- NVML ---- */
const char *nvmlErrorString(nvmlReturn_t r) {
    switch (r) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT: return "Timeout";
    case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    default: return "Unknown Error";
    }
}

nvmlReturn_t nvmlInit_v2(void) {
    if (initResult != NVML_SUCCESS) return initResult;
    pthread_mutex_lock(&lock);
    if (initCount++ == 0) { queued = 0; gpus[0].registered = gpus[1].registered = 0; }
    pthread_mutex_unlock(&lock);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void) {
    CHECK_INIT();
    pthread_mutex_lock(&lock);
    initCount--;
    pthread_mutex_unlock(&lock);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length) {
    CHECK_INIT();
    return copy(version, length, "550.54.15");
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v) { CHECK_INIT(); *v = 12040; return NVML_SUCCESS; }

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) { CHECK_INIT(); *count = 2; return NVML_SUCCESS; }

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device) {
    CHECK_INIT();
    if (index >= 2) return NVML_ERROR_INVALID_ARGUMENT;
    *device = &gpus[index];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned int length) {
    CHECK_DEV(d); return copy(uuid, length, d->uuid);
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned int length) {
    CHECK_DEV(d); return copy(name, length, d->name);
}

/* what the driver and firmware keep for themselves: 434 MiB on a whole GPU, none inside a MIG device */
static unsigned long long reserved(nvmlDevice_t d) { return d->isMig ? 0 : 434 * MIB; }

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m) {
    CHECK_DEV(d);
    if (d->lost) return NVML_ERROR_GPU_IS_LOST;
    /* the first version counts what the driver reserves for itself as used, as the real library does */
    m->total = d->memTotal; m->used = d->memUsed + reserved(d); m->free = d->memTotal - m->used;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m) {
    if (memoryV2 == 0) return NVML_ERROR_FUNCTION_NOT_FOUND;
    CHECK_DEV(d);
    if (d->lost) return NVML_ERROR_GPU_IS_LOST;
    if (memoryV2 == 2 || m->version != ((unsigned int) sizeof *m | 2U << 24)) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    /* used leaves the reserve out, as driver 580's library does (nvidia-smi shows this figure) */
    m->total = d->memTotal; m->reserved = reserved(d); m->used = d->memUsed;
    m->free = d->memTotal - m->used - m->reserved;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p) {
    CHECK_DEV(d);
    memset(p, 0, sizeof *p);
    strncpy(p->busIdLegacy, d->busId + 4, sizeof p->busIdLegacy - 1);
    strcpy(p->busId, d->busId);
    p->pciDeviceId = 0x1eb810de;
    return NVML_SUCCESS;
}

static nvmlReturn_t uint_or_unsupported(int value, unsigned int *out) {
    if (value < 0) return NVML_ERROR_NOT_SUPPORTED;
    *out = (unsigned int) value;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t d, unsigned int *mw) {
    CHECK_DEV(d); return uint_or_unsupported(d->powerLimitMw, mw);
}
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *mw) {
    CHECK_DEV(d); return uint_or_unsupported(d->powerUsageMw, mw);
}
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int *t) {
    CHECK_DEV(d);
    if (sensor != 0) return NVML_ERROR_INVALID_ARGUMENT;
    return uint_or_unsupported(d->tempC, t);
}
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u) {
    CHECK_DEV(d);
    if (d->lost) return NVML_ERROR_GPU_IS_LOST;
    if (d->utilGpu < 0) return NVML_ERROR_NOT_SUPPORTED;
    u->gpu = d->utilGpu; u->memory = d->utilMem;
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned int *mhz) {
    CHECK_DEV(d);
    if (type == 1) return uint_or_unsupported(d->smClock, mhz);
    if (type == 2) return uint_or_unsupported(d->memClock, mhz);
    return NVML_ERROR_NOT_SUPPORTED;
}
nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, int type, unsigned int *mhz) {
    CHECK_DEV(d);
    if (type == 1) return uint_or_unsupported(d->maxSmClock, mhz);
    if (type == 2) return uint_or_unsupported(d->maxMemClock, mhz);
    return NVML_ERROR_NOT_SUPPORTED;
}
nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int *major, int *minor) {
    CHECK_DEV(d); *major = d->ccMajor; *minor = d->ccMinor; return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int errorType, int counterType, unsigned long long *n) {
    CHECK_DEV(d);
    if (counterType != 0) return NVML_ERROR_INVALID_ARGUMENT;
    long long v = errorType == 0 ? d->eccCorrected : d->eccUncorrected;
    if (v < 0) return NVML_ERROR_NOT_SUPPORTED;
    *n = (unsigned long long) v;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int *current, unsigned int *pending) {
    CHECK_DEV(d);
    if (!d->migCapable) return NVML_ERROR_NOT_SUPPORTED;
    *current = *pending = (unsigned int) migEnabled;
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t d, unsigned int *count) {
    CHECK_DEV(d);
    if (!d->migCapable) return NVML_ERROR_NOT_SUPPORTED;
    *count = 7;
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t d, unsigned int index, nvmlDevice_t *mig) {
    CHECK_DEV(d);
    if (!d->migCapable || !migEnabled) return NVML_ERROR_NOT_SUPPORTED;
    if (index >= 7) return NVML_ERROR_INVALID_ARGUMENT;
    if (index >= 2) return NVML_ERROR_NOT_FOUND;
    *mig = &migs[index];
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t d, unsigned int *id) {
    CHECK_DEV(d);
    if (!d->isMig) return NVML_ERROR_NOT_SUPPORTED;
    *id = (unsigned int) d->gpuInstanceId;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t d, unsigned long long *types) {
    CHECK_DEV(d);
    if (d->isMig) return NVML_ERROR_NOT_SUPPORTED;
    *types = 0x1ULL | 0x2ULL | 0x4ULL | 0x8ULL | 0x10ULL;
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set) {
    CHECK_INIT();
    set->handle = calloc(1, sizeof *set->handle);
    set->handle->live = 1;
    pthread_mutex_lock(&lock);
    liveEventSets++;
    pthread_mutex_unlock(&lock);
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types, nvmlEventSet_t set) {
    CHECK_DEV(d);
    if (set.handle == NULL || !set.handle->live) return NVML_ERROR_INVALID_ARGUMENT;
    if (d->isMig) return NVML_ERROR_NOT_SUPPORTED;
    pthread_mutex_lock(&lock);
    d->registered |= types;
    pthread_mutex_unlock(&lock);
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms) {
    CHECK_INIT();
    if (set.handle == NULL || !set.handle->live || data == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += timeoutms / 1000;
    deadline.tv_nsec += (long) (timeoutms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) { deadline.tv_sec++; deadline.tv_nsec -= 1000000000L; }
    pthread_mutex_lock(&lock);
    for (;;) {
        for (int i = 0; i < queued; i++) {
            if (queue[i].device->registered & queue[i].eventType) {
                *data = queue[i];
                memmove(&queue[i], &queue[i + 1], (size_t) (queued - i - 1) * sizeof queue[0]);
                queued--;
                pthread_mutex_unlock(&lock);
                return NVML_SUCCESS;
            }
        }
        if (pthread_cond_timedwait(&arrived, &lock, &deadline) == ETIMEDOUT) {
            pthread_mutex_unlock(&lock);
            return NVML_ERROR_TIMEOUT;
        }
    }
}
nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
    CHECK_INIT();
    if (set.handle == NULL || !set.handle->live) return NVML_ERROR_INVALID_ARGUMENT;
    set.handle->live = 0;
    free(set.handle);
    pthread_mutex_lock(&lock);
    liveEventSets--;
    pthread_mutex_unlock(&lock);
    return NVML_SUCCESS;
}
