/*
 * The slice of the CUDA driver API (libcuda.so.1), NCCL (libnccl.so.2) and
 * cuFile (libcufile.so.0) that dftrace-bpf probes: types and declarations
 * written here from the public API documentation, so that the stand-in
 * libraries, the workload, the bench and the device test build without a
 * CUDA toolkit and without NVIDIA's headers.
 *
 * Only the ABI matters: argument order and widths, the numeric values of
 * the enums, the field order of the structures passed by pointer, and
 * ncclUniqueId passed by value (128 bytes on the stack). Opaque handles are
 * pointers to structures that only the library defines.
 *
 * GPUAPI_FUNCS(X) lists every function once, as X(library, name), for the
 * tables that load them with dlsym.
 */
#ifndef GPUAPI_H
#define GPUAPI_H

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#ifndef GPUAPI
#define GPUAPI /* the stand-ins define it: exported, never inlined */
#endif

/* ---- CUDA driver API ---- */

typedef int CUresult; /* 0: CUDA_SUCCESS */
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUlib_st *CUlibrary;
typedef struct CUkern_st *CUkernel;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUgraphExec_st *CUgraphExec;
typedef int CUjit_option;
typedef int CUlibraryOption;
typedef struct CUlaunchAttribute_st CUlaunchAttribute;

#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_OUT_OF_MEMORY 2
#define CUDA_ERROR_NOT_INITIALIZED 3
#define CUDA_ERROR_INVALID_HANDLE 400
#define CUDA_ERROR_NOT_FOUND 500

/* cuLaunchKernelEx's configuration, in the documented field order. */
typedef struct CUlaunchConfig_st {
	unsigned int gridDimX, gridDimY, gridDimZ;
	unsigned int blockDimX, blockDimY, blockDimZ;
	unsigned int sharedMemBytes;
	CUstream hStream;
	CUlaunchAttribute *attrs;
	unsigned int numAttrs;
} CUlaunchConfig;

GPUAPI CUresult cuInit(unsigned int flags);
GPUAPI CUresult cuDeviceGet(CUdevice *device, int ordinal);
GPUAPI CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
GPUAPI CUresult cuModuleLoadData(CUmodule *module, const void *image);
GPUAPI CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name);
GPUAPI CUresult cuLibraryLoadData(CUlibrary *library, const void *code,
				  CUjit_option *jitOptions, void **jitOptionsValues,
				  unsigned int numJitOptions, CUlibraryOption *libraryOptions,
				  void **libraryOptionValues, unsigned int numLibraryOptions);
GPUAPI CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name);
GPUAPI CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
			       unsigned int gridDimZ, unsigned int blockDimX,
			       unsigned int blockDimY, unsigned int blockDimZ,
			       unsigned int sharedMemBytes, CUstream hStream,
			       void **kernelParams, void **extra);
GPUAPI CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f,
				 void **kernelParams, void **extra);
GPUAPI CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX,
					  unsigned int gridDimY, unsigned int gridDimZ,
					  unsigned int blockDimX, unsigned int blockDimY,
					  unsigned int blockDimZ, unsigned int sharedMemBytes,
					  CUstream hStream, void **kernelParams);
GPUAPI CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream);
GPUAPI CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount);
GPUAPI CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount,
			      CUstream hStream);
GPUAPI CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount);
GPUAPI CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount);
GPUAPI CUresult cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount);
GPUAPI CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost,
				     size_t ByteCount, CUstream hStream);
GPUAPI CUresult cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice,
				     size_t ByteCount, CUstream hStream);
GPUAPI CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
				     size_t ByteCount, CUstream hStream);
GPUAPI CUresult cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext,
			     CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount);
GPUAPI CUresult cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext,
				  CUdeviceptr srcDevice, CUcontext srcContext,
				  size_t ByteCount, CUstream hStream);
GPUAPI CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize);
GPUAPI CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream);
GPUAPI CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags);
GPUAPI CUresult cuMemAllocHost_v2(void **pp, size_t bytesize);
GPUAPI CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags);
GPUAPI CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
				   size_t Height, unsigned int ElementSizeBytes);
GPUAPI CUresult cuMemFree_v2(CUdeviceptr dptr);
GPUAPI CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream);
GPUAPI CUresult cuMemFreeHost(void *p);
GPUAPI CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags);
GPUAPI CUresult cuStreamSynchronize(CUstream hStream);
GPUAPI CUresult cuCtxSynchronize(void);
GPUAPI CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags);
GPUAPI CUresult cuEventSynchronize(CUevent hEvent);
GPUAPI CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags);

/* ---- NCCL ---- */

typedef int ncclResult_t; /* 0: ncclSuccess */
typedef struct ncclComm *ncclComm_t;
typedef CUstream cudaStream_t; /* the runtime's stream is the driver's */

#define ncclSuccess 0
#define ncclInvalidArgument 4
#define ncclInvalidUsage 5
#define NCCL_UNIQUE_ID_BYTES 128

/* Passed by value to ncclCommInitRank: 128 bytes copied onto the stack. */
typedef struct {
	char internal[NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;

typedef enum {
	ncclInt8 = 0, ncclChar = 0,
	ncclUint8 = 1,
	ncclInt32 = 2, ncclInt = 2,
	ncclUint32 = 3,
	ncclInt64 = 4,
	ncclUint64 = 5,
	ncclFloat16 = 6, ncclHalf = 6,
	ncclFloat32 = 7, ncclFloat = 7,
	ncclFloat64 = 8, ncclDouble = 8,
	ncclBfloat16 = 9,
	ncclFloat8e4m3 = 10,
	ncclFloat8e5m2 = 11,
	ncclNumTypes = 12
} ncclDataType_t;

typedef enum {
	ncclSum = 0,
	ncclProd = 1,
	ncclMax = 2,
	ncclMin = 3,
	ncclAvg = 4,
	ncclNumOps = 5
} ncclRedOp_t;

/* The leading, stable fields of ncclConfig_t; the caller owns the whole
 * structure (NCCL_CONFIG_INITIALIZER), and the stand-in reads none of it
 * beyond these. */
typedef struct {
	size_t size;
	unsigned int magic;
	unsigned int version;
	int blocking;
} ncclConfig_t;

GPUAPI ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId);
GPUAPI ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId,
				     int rank);
GPUAPI ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks,
					   ncclUniqueId commId, int rank,
					   ncclConfig_t *config);
GPUAPI ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist);
GPUAPI ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank);
GPUAPI ncclResult_t ncclCommCount(const ncclComm_t comm, int *count);
#define NCCL_SPLIT_NOCOLOR (-1)
GPUAPI ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
				  ncclConfig_t *config);
GPUAPI ncclResult_t ncclCommDestroy(ncclComm_t comm);
GPUAPI ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
				  ncclDataType_t datatype, ncclRedOp_t op,
				  ncclComm_t comm, cudaStream_t stream);
GPUAPI ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
				  ncclDataType_t datatype, int root, ncclComm_t comm,
				  cudaStream_t stream);
GPUAPI ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count,
			       ncclDataType_t datatype, ncclRedOp_t op, int root,
			       ncclComm_t comm, cudaStream_t stream);
GPUAPI ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
				  ncclDataType_t datatype, ncclComm_t comm,
				  cudaStream_t stream);
GPUAPI ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff,
				      size_t recvcount, ncclDataType_t datatype,
				      ncclRedOp_t op, ncclComm_t comm,
				      cudaStream_t stream);
GPUAPI ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype,
			     int peer, ncclComm_t comm, cudaStream_t stream);
GPUAPI ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype,
			     int peer, ncclComm_t comm, cudaStream_t stream);
GPUAPI ncclResult_t ncclGroupStart(void);
GPUAPI ncclResult_t ncclGroupEnd(void);

/* ---- cuFile (GPUDirect Storage) ---- */

typedef void *CUfileHandle_t;
typedef void *CUfileBatchHandle_t;

#define CU_FILE_SUCCESS 0
#define CU_FILE_DRIVER_NOT_INITIALIZED 5001
#define CU_FILE_INVALID_VALUE 5022
#define CU_FILE_MEMORY_NOT_REGISTERED 5024
#define CU_FILE_HANDLE_NOT_REGISTERED 5027
#define CU_FILE_INTERNAL_ERROR 5030
#define CU_FILE_HANDLE_TYPE_OPAQUE_FD 1

/* Returned by value: {error of cuFile, error of the CUDA driver}. */
typedef struct {
	int err;
	CUresult cu_err;
} CUfileError_t;

typedef struct {
	int type; /* CU_FILE_HANDLE_TYPE_OPAQUE_FD */
	union {
		int fd;
		void *handle;
	} handle;
	const void *fs_ops;
} CUfileDescr_t;

typedef enum { CUFILE_READ = 0, CUFILE_WRITE = 1 } CUfileOpcode_t;
typedef enum { CUFILE_BATCH = 1 } CUfileBatchMode_t;
typedef enum {
	CUFILE_WAITING = 1,
	CUFILE_PENDING = 2,
	CUFILE_INVALID = 4,
	CUFILE_CANCELED = 8,
	CUFILE_COMPLETE = 16,
	CUFILE_TIMEOUT = 32,
	CUFILE_FAILED = 64
} CUfileStatus_t;

/* One I/O of a batch, in the documented field order. */
typedef struct {
	CUfileBatchMode_t mode;
	union {
		struct {
			void *devPtr_base;
			off_t file_offset;
			off_t devPtr_offset;
			size_t size;
		} batch;
	} u;
	CUfileHandle_t fh;
	CUfileOpcode_t opcode;
	void *cookie;
} CUfileIOParams_t;

/* One completion of a batch. */
typedef struct {
	void *cookie;
	CUfileStatus_t status;
	size_t ret;
} CUfileIOEvents_t;

GPUAPI CUfileError_t cuFileDriverOpen(void);
GPUAPI CUfileError_t cuFileDriverClose(void);
GPUAPI CUfileError_t cuFileDriverClose_v2(void);
GPUAPI CUfileError_t cuFileHandleRegister(CUfileHandle_t *fh, CUfileDescr_t *descr);
GPUAPI void cuFileHandleDeregister(CUfileHandle_t fh);
GPUAPI CUfileError_t cuFileBufRegister(const void *bufPtr_base, size_t length, int flags);
GPUAPI CUfileError_t cuFileBufDeregister(const void *bufPtr_base);
GPUAPI ssize_t cuFileRead(CUfileHandle_t fh, void *bufPtr_base, size_t size,
			  off_t file_offset, off_t bufPtr_offset);
GPUAPI ssize_t cuFileWrite(CUfileHandle_t fh, const void *bufPtr_base, size_t size,
			   off_t file_offset, off_t bufPtr_offset);
GPUAPI CUfileError_t cuFileReadAsync(CUfileHandle_t fh, void *bufPtr_base, size_t *size_p,
				     off_t *file_offset_p, off_t *bufPtr_offset_p,
				     ssize_t *bytes_read_p, CUstream stream);
GPUAPI CUfileError_t cuFileWriteAsync(CUfileHandle_t fh, void *bufPtr_base, size_t *size_p,
				      off_t *file_offset_p, off_t *bufPtr_offset_p,
				      ssize_t *bytes_written_p, CUstream stream);
GPUAPI CUfileError_t cuFileBatchIOSetUp(CUfileBatchHandle_t *batch_idp, unsigned nr);
GPUAPI CUfileError_t cuFileBatchIOSubmit(CUfileBatchHandle_t batch_idp, unsigned nr,
					 CUfileIOParams_t *iocbp, unsigned int flags);
GPUAPI CUfileError_t cuFileBatchIOGetStatus(CUfileBatchHandle_t batch_idp, unsigned min_nr,
					    unsigned *nr, CUfileIOEvents_t *iocbp,
					    struct timespec *timeout);
GPUAPI void cuFileBatchIODestroy(CUfileBatchHandle_t batch_idp);

/* ---- every function, by library: X(lib, name) ---- */

#define GPUAPI_CUDA_FUNCS(X)                                                  \
	X(cuda, cuInit) X(cuda, cuDeviceGet) X(cuda, cuCtxCreate_v2)          \
	X(cuda, cuModuleLoadData) X(cuda, cuModuleGetFunction)                \
	X(cuda, cuLibraryLoadData) X(cuda, cuLibraryGetKernel)                \
	X(cuda, cuLaunchKernel) X(cuda, cuLaunchKernelEx)                     \
	X(cuda, cuLaunchCooperativeKernel) X(cuda, cuGraphLaunch)             \
	X(cuda, cuMemcpy) X(cuda, cuMemcpyAsync) X(cuda, cuMemcpyHtoD_v2)     \
	X(cuda, cuMemcpyDtoH_v2) X(cuda, cuMemcpyDtoD_v2)                     \
	X(cuda, cuMemcpyHtoDAsync_v2) X(cuda, cuMemcpyDtoHAsync_v2)           \
	X(cuda, cuMemcpyDtoDAsync_v2) X(cuda, cuMemcpyPeer)                   \
	X(cuda, cuMemcpyPeerAsync) X(cuda, cuMemAlloc_v2)                     \
	X(cuda, cuMemAllocAsync) X(cuda, cuMemAllocManaged)                   \
	X(cuda, cuMemAllocHost_v2) X(cuda, cuMemHostAlloc)                    \
	X(cuda, cuMemAllocPitch_v2) X(cuda, cuMemFree_v2)                     \
	X(cuda, cuMemFreeAsync) X(cuda, cuMemFreeHost) X(cuda, cuStreamCreate) \
	X(cuda, cuStreamSynchronize) X(cuda, cuCtxSynchronize)                \
	X(cuda, cuEventCreate) X(cuda, cuEventSynchronize)                    \
	X(cuda, cuStreamWaitEvent)

#define GPUAPI_NCCL_FUNCS(X)                                                  \
	X(nccl, ncclGetUniqueId) X(nccl, ncclCommInitRank)                    \
	X(nccl, ncclCommInitRankConfig) X(nccl, ncclCommInitAll)              \
	X(nccl, ncclCommUserRank) X(nccl, ncclCommCount)                      \
	X(nccl, ncclCommDestroy) X(nccl, ncclAllReduce) X(nccl, ncclBroadcast) \
	X(nccl, ncclReduce) X(nccl, ncclAllGather) X(nccl, ncclReduceScatter) \
	X(nccl, ncclSend) X(nccl, ncclRecv) X(nccl, ncclGroupStart)           \
	X(nccl, ncclGroupEnd)

#define GPUAPI_CUFILE_FUNCS(X)                                                \
	X(cufile, cuFileDriverOpen) X(cufile, cuFileDriverClose)              \
	X(cufile, cuFileDriverClose_v2) X(cufile, cuFileHandleRegister)       \
	X(cufile, cuFileHandleDeregister) X(cufile, cuFileBufRegister)        \
	X(cufile, cuFileBufDeregister) X(cufile, cuFileRead)                  \
	X(cufile, cuFileWrite) X(cufile, cuFileReadAsync)                     \
	X(cufile, cuFileWriteAsync) X(cufile, cuFileBatchIOSetUp)             \
	X(cufile, cuFileBatchIOSubmit) X(cufile, cuFileBatchIOGetStatus)      \
	X(cufile, cuFileBatchIODestroy)

#define GPUAPI_FUNCS(X) GPUAPI_CUDA_FUNCS(X) GPUAPI_NCCL_FUNCS(X) GPUAPI_CUFILE_FUNCS(X)

/* The sonames, as loaders and probes look them up. */
#define GPUAPI_SONAME_cuda "libcuda.so.1"
#define GPUAPI_SONAME_nccl "libnccl.so.2"
#define GPUAPI_SONAME_cufile "libcufile.so.0"

#endif
