/* shardy-convert's PJRT plugin wrapper: a PJRT C-API plugin that wraps another one.
 *
 * A framework (torch_xla, JAX, ...) loads this library as its PJRT plugin. `GetPjrtApi` dlopens
 * the real plugin named by $SHARDY_CONVERT_PLUGIN, copies its PJRT_Api table and overrides the
 * entries below; every other entry is the plugin's own.
 *
 *   PJRT_Client_Compile            each program and its CompileOptionsProto go through a Python
 *                                  function in the host process first ($SHARDY_CONVERT_HOOK,
 *                                  default shardy_convert.plugin.wrapper:on_compile), which
 *                                  returns the Shardy program and the options to compile it with;
 *   PJRT_LoadedExecutable_Execute  an older caller's PJRT_ExecuteOptions reach the plugin
 *                                  zero-padded to the size the plugin's version requires;
 *   PJRT_Error_{Destroy,Message,GetCode,ForEachPayload}  so the wrapper can return errors of its
 *                                  own; the plugin's errors pass through;
 *   device-order entries           for programs the hook moved to another device order (below).
 *
 * Built against the pjrt_c_api.h an installed package ships (setup.py finds it); what later API
 * versions added that the wrapper must know is in pjrt_later.h. docs/wrapper-internals.md says
 * how each part works and why.
 *
 * The Python C API is looked up in the host process at run time (dlsym), so the library links
 * against no libpython; in a process without a Python interpreter every compile fails with a
 * PJRT error saying so. Nothing here aborts the host: every failure is a PJRT_Error.
 */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pjrt_c_api.h"
#include "pjrt_later.h"

/* ---- Errors of the wrapper's own ----------------------------------------------------------- */

/* An error the wrapper made. It starts with the function table later API versions put at the
 * start of every PJRT_Error, so a caller that reads that table (API > 0.105) gets the wrapper's
 * functions; a caller of any version reaches them through the intercepted PJRT_Error_* entries.
 * The live list tells the wrapper's errors from the plugin's (a plugin's error is opaque: its
 * first word may be anything). */
typedef struct WrapperError {
  const ErrorFunctionTable *vtable;
  struct WrapperError *next;
  PJRT_Error_Code code;
  size_t size;
  const char *message;
  char text[];
} WrapperError;

static WrapperError *live_errors;
static pthread_mutex_t errors_lock = PTHREAD_MUTEX_INITIALIZER;

static void table_destroy(PJRT_Error *error);
static void table_message(const PJRT_Error *error, const char **message, size_t *size);
static PJRT_Error_Code table_get_code(const PJRT_Error *error);
static void table_for_each_payload(const PJRT_Error *error, PJRT_Error_PayloadVisitor visitor,
                                   void *user_arg);

static const ErrorFunctionTable error_table = {
    .struct_size = ErrorFunctionTable_STRUCT_SIZE,
    .instance_size = sizeof(WrapperError),
    .extension_start = NULL,
    .destroy = table_destroy,
    .message = table_message,
    .get_code = table_get_code,
    .for_each_payload = table_for_each_payload,
};

/* What an error is when there is no memory to make one: never freed, shared by every thread
 * (it is never written), so running out of memory is reported as such, not as success. */
#define OUT_OF_MEMORY "shardy-convert PJRT wrapper: out of memory"
static WrapperError out_of_memory = {
    .vtable = &error_table,
    .code = PJRT_Error_Code_RESOURCE_EXHAUSTED,
    .size = sizeof OUT_OF_MEMORY - 1,
    .message = OUT_OF_MEMORY,
};

static PJRT_Error *new_error(PJRT_Error_Code code, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

static PJRT_Error *new_error(PJRT_Error_Code code, const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  int size = vsnprintf(NULL, 0, format, ap);
  va_end(ap);
  WrapperError *e = size < 0 ? NULL : malloc(sizeof(WrapperError) + (size_t)size + 1);
  if (e == NULL) return (PJRT_Error *)&out_of_memory;
  va_start(ap, format);
  vsnprintf(e->text, (size_t)size + 1, format, ap);
  va_end(ap);
  e->vtable = &error_table;
  e->code = code;
  e->size = (size_t)size;
  e->message = e->text;
  pthread_mutex_lock(&errors_lock);
  e->next = live_errors;
  live_errors = e;
  pthread_mutex_unlock(&errors_lock);
  return (PJRT_Error *)e;
}

/* `e` as the wrapper's own error, NULL when it is the plugin's. Takes it off the live list when
 * `remove` (it is being destroyed). */
static WrapperError *ours(const PJRT_Error *e, int remove) {
  if (e == (const PJRT_Error *)&out_of_memory) return &out_of_memory;
  pthread_mutex_lock(&errors_lock);
  WrapperError **link = &live_errors;
  while (*link != NULL && (const PJRT_Error *)*link != e) link = &(*link)->next;
  WrapperError *found = *link;
  if (found != NULL && remove) *link = found->next;
  pthread_mutex_unlock(&errors_lock);
  return found;
}

static void table_destroy(PJRT_Error *error) {
  WrapperError *e = ours(error, 1);
  if (e != NULL && e != &out_of_memory) free(e);
}

static void table_message(const PJRT_Error *error, const char **message, size_t *size) {
  const WrapperError *e = (const WrapperError *)error;
  *message = e->message;
  *size = e->size;
}

static PJRT_Error_Code table_get_code(const PJRT_Error *error) {
  return ((const WrapperError *)error)->code;
}

/* The wrapper's errors carry no payloads. */
static void table_for_each_payload(const PJRT_Error *error, PJRT_Error_PayloadVisitor visitor,
                                   void *user_arg) {
  (void)error, (void)visitor, (void)user_arg;
}

/* Test builds only (-DSHARDY_CONVERT_FAULTS, tests/plugin/test_newer_plugin.py): the allocation
 * at the site $SHARDY_CONVERT_FAIL_ALLOC names fails, as if memory had run out there. */
#ifdef SHARDY_CONVERT_FAULTS
static int fault(const char *site) {
  const char *name = getenv("SHARDY_CONVERT_FAIL_ALLOC");
  return name != NULL && strcmp(name, site) == 0;
}
#else
#define fault(site) ((void)(site), 0)
#endif

/* XLA's ActualStructSizeIsGreaterOrEqual: an argument struct must hold every field the wrapper
 * reads. A newer caller's larger struct is fine (its extra fields are left as they are); an
 * older caller's smaller one is refused, never read past its end. */
static PJRT_Error *check_size(const char *name, size_t needed, size_t given) {
  if (given >= needed) return NULL;
  return new_error(PJRT_Error_Code_INVALID_ARGUMENT,
                   "shardy-convert PJRT wrapper: unexpected %s size: expected at least %zu, got "
                   "%zu (a caller of an "
                   "older PJRT C API than this wrapper reads)",
                   name, needed, given);
}
#define CHECK_ARGS(type, args) check_size(#type, type##_STRUCT_SIZE, (args)->struct_size)

/* ---- The wrapped plugin ---------------------------------------------------------------------- */

static LaterApi *api;        /* the table handed out: the plugin's, with the overrides */
static const LaterApi *real; /* the plugin's own table */
static size_t real_size;     /* its struct_size */
static size_t plugin_options_size;
static char load_problem[1024];
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

/* The plugin's entry `name` when its table has it (an older plugin's ends sooner). */
#define HAS(table_size, name) ((table_size) >= PJRT_STRUCT_SIZE(LaterApi, name))
#define REAL(name) (HAS(real_size, name) ? real->name : NULL)

/* The caller's error entries: the wrapper's errors are handled here, the plugin's forwarded. A
 * wrapper error never reaches the plugin. */
static void error_destroy(PJRT_Error_Destroy_Args *args) {
  if (args->struct_size < PJRT_STRUCT_SIZE(PJRT_Error_Destroy_Args, error)) return;
  if (ours(args->error, 0) != NULL) return table_destroy(args->error);
  if (REAL(header.PJRT_Error_Destroy) != NULL) real->header.PJRT_Error_Destroy(args);
}

static void error_message(PJRT_Error_Message_Args *args) {
  if (args->struct_size < PJRT_Error_Message_Args_STRUCT_SIZE) return;
  if (ours(args->error, 0) != NULL)
    return table_message(args->error, &args->message, &args->message_size);
  if (REAL(header.PJRT_Error_Message) != NULL) return real->header.PJRT_Error_Message(args);
  args->message = "", args->message_size = 0;
}

static PJRT_Error *error_get_code(PJRT_Error_GetCode_Args *args) {
  PJRT_Error *e = CHECK_ARGS(PJRT_Error_GetCode_Args, args);
  if (e != NULL) return e;
  if (ours(args->error, 0) != NULL) {
    args->code = table_get_code(args->error);
    return NULL;
  }
  if (REAL(header.PJRT_Error_GetCode) != NULL) return real->header.PJRT_Error_GetCode(args);
  args->code = PJRT_Error_Code_UNKNOWN;
  return NULL;
}

static PJRT_Error *error_for_each_payload(PJRT_Error_ForEachPayload_Args *args) {
  PJRT_Error *e = CHECK_ARGS(PJRT_Error_ForEachPayload_Args, args);
  if (e != NULL || ours(args->error, 0) != NULL) return e;
  return REAL(FOR_EACH_PAYLOAD_ENTRY) != NULL ? real->FOR_EACH_PAYLOAD_ENTRY(args) : NULL;
}

/* The entries that receive an error object, the same in both tables (the wrapped plugin's and
 * the stand-in): the wrapper's errors are answered here, whichever table made them. */
static void install_error_entries(LaterApi *table, size_t size) {
  table->header.PJRT_Error_Destroy = error_destroy;
  table->header.PJRT_Error_Message = error_message;
  table->header.PJRT_Error_GetCode = error_get_code;
  if (HAS(size, FOR_EACH_PAYLOAD_ENTRY)) table->FOR_EACH_PAYLOAD_ENTRY = error_for_each_payload;
}

/* Every other entry of the stand-in table: there is no plugin to forward to. */
static PJRT_Error *unavailable(void) {
  return new_error(PJRT_Error_Code_FAILED_PRECONDITION, "shardy-convert PJRT wrapper: %s",
                   load_problem);
}

/* The header's entries of 0.81 but the three PJRT_Error_* ones, in its order. With
 * HEADER_LATER_ENTRIES and LATER_ENTRIES (pjrt_later.h: 0.82..0.98) they are the stand-in
 * table's stubs, one of each entry's own type: ISO C calls a function only through its own type
 * (clang's -fsanitize=function reports any other call). */
#define ENTRIES_0_81(X)                                   \
  X(PJRT_Plugin_Initialize)                               \
  X(PJRT_Plugin_Attributes)                               \
  X(PJRT_Event_Destroy)                                   \
  X(PJRT_Event_IsReady)                                   \
  X(PJRT_Event_Error)                                     \
  X(PJRT_Event_Await)                                     \
  X(PJRT_Event_OnReady)                                   \
  X(PJRT_Client_Create)                                   \
  X(PJRT_Client_Destroy)                                  \
  X(PJRT_Client_PlatformName)                             \
  X(PJRT_Client_ProcessIndex)                             \
  X(PJRT_Client_PlatformVersion)                          \
  X(PJRT_Client_Devices)                                  \
  X(PJRT_Client_AddressableDevices)                       \
  X(PJRT_Client_LookupDevice)                             \
  X(PJRT_Client_LookupAddressableDevice)                  \
  X(PJRT_Client_AddressableMemories)                      \
  X(PJRT_Client_Compile)                                  \
  X(PJRT_Client_DefaultDeviceAssignment)                  \
  X(PJRT_Client_BufferFromHostBuffer)                     \
  X(PJRT_DeviceDescription_Id)                            \
  X(PJRT_DeviceDescription_ProcessIndex)                  \
  X(PJRT_DeviceDescription_Attributes)                    \
  X(PJRT_DeviceDescription_Kind)                          \
  X(PJRT_DeviceDescription_DebugString)                   \
  X(PJRT_DeviceDescription_ToString)                      \
  X(PJRT_Device_GetDescription)                           \
  X(PJRT_Device_IsAddressable)                            \
  X(PJRT_Device_LocalHardwareId)                          \
  X(PJRT_Device_AddressableMemories)                      \
  X(PJRT_Device_DefaultMemory)                            \
  X(PJRT_Device_MemoryStats)                              \
  X(PJRT_Memory_Id)                                       \
  X(PJRT_Memory_Kind)                                     \
  X(PJRT_Memory_DebugString)                              \
  X(PJRT_Memory_ToString)                                 \
  X(PJRT_Memory_AddressableByDevices)                     \
  X(PJRT_Executable_Destroy)                              \
  X(PJRT_Executable_Name)                                 \
  X(PJRT_Executable_NumReplicas)                          \
  X(PJRT_Executable_NumPartitions)                        \
  X(PJRT_Executable_NumOutputs)                           \
  X(PJRT_Executable_SizeOfGeneratedCodeInBytes)           \
  X(PJRT_Executable_GetCostAnalysis)                      \
  X(PJRT_Executable_OutputMemoryKinds)                    \
  X(PJRT_Executable_OptimizedProgram)                     \
  X(PJRT_Executable_Serialize)                            \
  X(PJRT_LoadedExecutable_Destroy)                        \
  X(PJRT_LoadedExecutable_GetExecutable)                  \
  X(PJRT_LoadedExecutable_AddressableDevices)             \
  X(PJRT_LoadedExecutable_Delete)                         \
  X(PJRT_LoadedExecutable_IsDeleted)                      \
  X(PJRT_LoadedExecutable_Execute)                        \
  X(PJRT_Executable_DeserializeAndLoad)                   \
  X(PJRT_LoadedExecutable_Fingerprint)                    \
  X(PJRT_Buffer_Destroy)                                  \
  X(PJRT_Buffer_ElementType)                              \
  X(PJRT_Buffer_Dimensions)                               \
  X(PJRT_Buffer_UnpaddedDimensions)                       \
  X(PJRT_Buffer_DynamicDimensionIndices)                  \
  X(PJRT_Buffer_GetMemoryLayout)                          \
  X(PJRT_Buffer_OnDeviceSizeInBytes)                      \
  X(PJRT_Buffer_Device)                                   \
  X(PJRT_Buffer_Memory)                                   \
  X(PJRT_Buffer_Delete)                                   \
  X(PJRT_Buffer_IsDeleted)                                \
  X(PJRT_Buffer_CopyToDevice)                             \
  X(PJRT_Buffer_ToHostBuffer)                             \
  X(PJRT_Buffer_IsOnCpu)                                  \
  X(PJRT_Buffer_ReadyEvent)                               \
  X(PJRT_Buffer_UnsafePointer)                            \
  X(PJRT_Buffer_IncreaseExternalReferenceCount)           \
  X(PJRT_Buffer_DecreaseExternalReferenceCount)           \
  X(PJRT_Buffer_OpaqueDeviceMemoryDataPointer)            \
  X(PJRT_CopyToDeviceStream_Destroy)                      \
  X(PJRT_CopyToDeviceStream_AddChunk)                     \
  X(PJRT_CopyToDeviceStream_TotalBytes)                   \
  X(PJRT_CopyToDeviceStream_GranuleSize)                  \
  X(PJRT_CopyToDeviceStream_CurrentBytes)                 \
  X(PJRT_TopologyDescription_Create)                      \
  X(PJRT_TopologyDescription_Destroy)                     \
  X(PJRT_TopologyDescription_PlatformName)                \
  X(PJRT_TopologyDescription_PlatformVersion)             \
  X(PJRT_TopologyDescription_GetDeviceDescriptions)       \
  X(PJRT_TopologyDescription_Serialize)                   \
  X(PJRT_TopologyDescription_Attributes)                  \
  X(PJRT_Compile)                                         \
  X(PJRT_Executable_OutputElementTypes)                   \
  X(PJRT_Executable_OutputDimensions)                     \
  X(PJRT_Buffer_CopyToMemory)                             \
  X(PJRT_Client_CreateViewOfDeviceBuffer)                 \
  X(PJRT_Executable_Fingerprint)                          \
  X(PJRT_Client_TopologyDescription)                      \
  X(PJRT_Executable_GetCompiledMemoryStats)               \
  X(PJRT_Memory_Kind_Id)                                  \
  X(PJRT_ExecuteContext_Create)                           \
  X(PJRT_ExecuteContext_Destroy)                          \
  X(PJRT_Buffer_CopyRawToHost)                            \
  X(PJRT_AsyncHostToDeviceTransferManager_Destroy)        \
  X(PJRT_AsyncHostToDeviceTransferManager_TransferData)   \
  X(PJRT_Client_CreateBuffersForAsyncHostToDevice)        \
  X(PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer) \
  X(PJRT_AsyncHostToDeviceTransferManager_Device)         \
  X(PJRT_AsyncHostToDeviceTransferManager_BufferCount)    \
  X(PJRT_AsyncHostToDeviceTransferManager_BufferSize)     \
  X(PJRT_AsyncHostToDeviceTransferManager_SetBufferError) \
  X(PJRT_AsyncHostToDeviceTransferManager_AddMetadata)    \
  X(PJRT_Client_DmaMap)                                   \
  X(PJRT_Client_DmaUnmap)                                 \
  X(PJRT_Client_CreateUninitializedBuffer)                \
  X(PJRT_Client_UpdateGlobalProcessInfo)                  \
  X(PJRT_TopologyDescription_Deserialize)                 \
  X(PJRT_Client_CreateAliasBuffer)                        \
  X(PJRT_Client_FulfillAliasBuffer)                       \
  X(PJRT_LoadedExecutable_GetDeviceAssignment)

/* The list is 0.81's table whole: as many entries as it has, each name assigned below. */
#define COUNT_ENTRY(name) +1
_Static_assert(PJRT_STRUCT_SIZE(PJRT_Api, PJRT_LoadedExecutable_GetDeviceAssignment) ==
                   offsetof(PJRT_Api, PJRT_Error_Destroy) +
                       (3 ENTRIES_0_81(COUNT_ENTRY)) * sizeof(LaterEntry),
               "ENTRIES_0_81 must list every entry of PJRT C API 0.81 but the PJRT_Error_* ones");

#define STUB(name)                                                  \
  static PJRT_Error *unavailable_##name(struct name##_Args *args) { \
    (void)args;                                                     \
    return unavailable();                                           \
  }
ENTRIES_0_81(STUB)
HEADER_LATER_ENTRIES(STUB)
LATER_ENTRIES(STUB)

/* ---- Executables compiled in another device order ------------------------------------------ */

/* The hook may hand back an iota-mesh program plus the order it runs in: the plugin's partition
 * k runs on the device the caller knows as position order[k] of its device assignment. One
 * record per executable keeps the caller's view of it (docs/wrapper-internals.md). Records are
 * written under the lock; what one holds is never changed once set. A call that uses one holds
 * it (hold_order .. release_order, under the lock): it is freed when its executable is
 * destroyed and no call holds it, so a record held may be read without the lock, and every use
 * comes before the free through the lock, whatever else orders the caller's calls. */
typedef struct Ordered {
  struct Ordered *next;
  const void *key; /* a PJRT_LoadedExecutable* or a PJRT_Executable* of one */
  size_t n;
  int32_t *order;        /* the plugin's partition k runs the caller's device list order[k] */
  int identity;          /* order[k] == k: the caller's own order (nothing to permute on
                          * Execute; the compiled shardings are still relabelled) */
  PJRT_Device **devices; /* addressable devices in the caller's order (made on first ask) */
  char *program;         /* the optimized program, shardings relabelled (made on first ask) */
  size_t program_size;
  const char *format; /* the plugin's format string of that program */
  size_t format_size;
  int users;     /* the calls holding it now (hold_order) */
  int forgotten; /* its executable was destroyed: the last holder frees it */
} Ordered;

static Ordered *ordered;
static pthread_mutex_t ordered_lock = PTHREAD_MUTEX_INITIALIZER;

/* Records the order `key` runs in. Out of memory, nothing is recorded and the caller must fail
 * (an executable without its record would run on the caller's devices unpermuted). `site` names
 * the caller for fault(). */
static PJRT_Error *remember_order(const char *site, const void *key, const int32_t *order,
                                  size_t n) {
  Ordered *o = fault(site) ? NULL : calloc(1, sizeof(Ordered));
  int32_t *copy = o != NULL ? malloc(n > 0 ? n * sizeof(int32_t) : 1) : NULL;
  if (copy == NULL) {
    free(o);
    return (PJRT_Error *)&out_of_memory;
  }
  memcpy(copy, order, n * sizeof(int32_t));
  o->key = key, o->n = n, o->order = copy, o->identity = 1;
  for (size_t k = 0; k < n; k++) o->identity &= order[k] == (int32_t)k;
  pthread_mutex_lock(&ordered_lock);
  o->next = ordered;
  ordered = o;
  pthread_mutex_unlock(&ordered_lock);
  return NULL;
}

/* The record of `key`, held until release_order (NULL: none). */
static Ordered *hold_order(const void *key) {
  pthread_mutex_lock(&ordered_lock);
  Ordered *o = ordered;
  while (o != NULL && o->key != key) o = o->next;
  if (o != NULL) o->users++;
  pthread_mutex_unlock(&ordered_lock);
  return o;
}

static void free_order(Ordered *o) {
  free(o->order), free(o->devices), free(o->program), free(o);
}

static void release_order(const Ordered *held) {
  if (held == NULL) return;
  Ordered *o = (Ordered *)held;
  pthread_mutex_lock(&ordered_lock);
  int last = --o->users == 0 && o->forgotten;
  pthread_mutex_unlock(&ordered_lock);
  if (last) free_order(o);
}

static void forget_order(const void *key) {
  pthread_mutex_lock(&ordered_lock);
  Ordered **link = &ordered;
  while (*link != NULL && (*link)->key != key) link = &(*link)->next;
  Ordered *o = *link;
  int unused = 0;
  if (o != NULL) *link = o->next, o->forgotten = 1, unused = o->users == 0;
  pthread_mutex_unlock(&ordered_lock);
  if (unused) free_order(o);
}
/* ---- The Python side ------------------------------------------------------------------------ */

typedef struct PyObject PyObject;

/* The Python C API the wrapper calls: X(return type, field of `py`, parameters, symbol). */
#define PYTHON_API(X)                                                                            \
  X(int, IsInitialized, (void), "Py_IsInitialized")                                              \
  X(int, GILState_Ensure, (void), "PyGILState_Ensure")                                           \
  X(void, GILState_Release, (int), "PyGILState_Release")                                         \
  X(int, GILState_Check, (void), "PyGILState_Check")                                             \
  X(void *, Eval_SaveThread, (void), "PyEval_SaveThread")                                        \
  X(void, Eval_RestoreThread, (void *), "PyEval_RestoreThread")                                  \
  X(PyObject *, Import_ImportModule, (const char *), "PyImport_ImportModule")                    \
  X(PyObject *, Object_GetAttrString, (PyObject *, const char *), "PyObject_GetAttrString")      \
  X(PyObject *, Object_CallObject, (PyObject *, PyObject *), "PyObject_CallObject")              \
  X(PyObject *, Object_Str, (PyObject *), "PyObject_Str")                                        \
  X(PyObject *, Tuple_New, (ptrdiff_t), "PyTuple_New")                                           \
  X(int, Tuple_SetItem, (PyObject *, ptrdiff_t, PyObject *), "PyTuple_SetItem")                  \
  X(PyObject *, Tuple_GetItem, (PyObject *, ptrdiff_t), "PyTuple_GetItem")                       \
  X(ptrdiff_t, Tuple_Size, (PyObject *), "PyTuple_Size")                                         \
  X(PyObject *, Bytes_FromStringAndSize, (const char *, ptrdiff_t), "PyBytes_FromStringAndSize") \
  X(int, Bytes_AsStringAndSize, (PyObject *, char **, ptrdiff_t *), "PyBytes_AsStringAndSize")   \
  X(const char *, Unicode_AsUTF8AndSize, (PyObject *, ptrdiff_t *), "PyUnicode_AsUTF8AndSize")   \
  X(void, Err_Fetch, (PyObject **, PyObject **, PyObject **), "PyErr_Fetch")                     \
  X(void, Err_Clear, (void), "PyErr_Clear")                                                      \
  X(void, DecRef, (PyObject *), "Py_DecRef")                                                     \
  X(int, Err_GivenExceptionMatches, (PyObject *, PyObject *), "PyErr_GivenExceptionMatches")     \
  X(void, Err_Restore, (PyObject *, PyObject *, PyObject *), "PyErr_Restore")                    \
  X(int, AddPendingCall, (int (*)(void *), void *), "Py_AddPendingCall")

#define PYTHON_FIELD(type, field, params, symbol) type(*field) params;
static struct {
  PYTHON_API(PYTHON_FIELD)
  PyObject **Exc_Exception; /* a variable: the address of PyExc_Exception */
} py;
static int have_python;
/* Imported on first use: the compile hook, then shardy_convert.plugin.wrapper's relabel_program
 * and caller_device_assignment. */
static PyObject *hook, *relabeller, *reassign;

/* Each of PYTHON_API looked up in the host process, in its own type: 0 when one is missing. */
#define FIND_PYTHON(type, field, params, symbol) \
  if ((py.field = (type(*) params)dlsym(RTLD_DEFAULT, symbol)) == NULL) return 0;
static int find_python(void) {
  PYTHON_API(FIND_PYTHON)
  py.Exc_Exception = (PyObject **)dlsym(RTLD_DEFAULT, "PyExc_Exception");
  return py.Exc_Exception != NULL;
}

#define MAX_ITEMS 5
typedef struct {
  char *data[MAX_ITEMS]; /* malloc'd copies of the bytes a Python function returned */
  size_t size[MAX_ITEMS];
} Answer;

static void free_answer(Answer *r) {
  for (int i = 0; i < MAX_ITEMS; i++) free(r->data[i]);
}

static void decref(PyObject *o) {
  if (o != NULL) py.DecRef(o);
}

/* An exception that is no Exception (KeyboardInterrupt: a Ctrl-C that arrived while the hook
 * ran; SystemExit) is not the hook's failure: it is the host's, and must reach the host's code
 * as itself. It cannot cross the C++ of the framework (torch_xla raises its own error for the
 * failed compile), so it is kept here and raised again in the host's main thread as soon as
 * that runs Python code again (Py_AddPendingCall), after the compile failed with a PJRT error
 * saying so. One at a time: a second one while the first waits is dropped (it is the same
 * Ctrl-C, seen by another compile). */
typedef struct {
  PyObject *type, *value, *trace;
} Pending;
static Pending pending; /* the GIL guards it */

static int raise_pending(void *unused) {
  (void)unused;
  Pending p = pending;
  memset(&pending, 0, sizeof pending);
  if (p.type == NULL) return 0;
  py.Err_Restore(p.type, p.value, p.trace); /* steals the references */
  return -1;
}

static int keep_for_the_host(PyObject *type, PyObject *value, PyObject *trace) {
  if (pending.type != NULL) {
    decref(type), decref(value), decref(trace);
    return 1;
  }
  pending.type = type, pending.value = value, pending.trace = trace;
  if (py.AddPendingCall(raise_pending, NULL) == 0) return 1;
  memset(&pending, 0, sizeof pending); /* the queue is full: reported as a failure instead */
  return 0;
}

/* str(exception) with its type's name, for an exception a Python function let escape. */
static PJRT_Error *python_error(const char *what) {
  PyObject *type = NULL, *value = NULL, *trace = NULL;
  py.Err_Fetch(&type, &value, &trace);
  PyObject *name = type ? py.Object_GetAttrString(type, "__name__") : NULL;
  PyObject *text = value ? py.Object_Str(value) : NULL;
  const char *n = name ? py.Unicode_AsUTF8AndSize(name, NULL) : NULL;
  const char *t = text ? py.Unicode_AsUTF8AndSize(text, NULL) : NULL;
  py.Err_Clear();
  int hosts = type != NULL && !py.Err_GivenExceptionMatches(type, *py.Exc_Exception);
  PJRT_Error *e;
  if (hosts && keep_for_the_host(type, value, trace)) {
    e = new_error(PJRT_Error_Code_CANCELLED,
                  "shardy-convert: %s during the conversion: the compile "
                  "is abandoned (raised again in the program)",
                  n ? n : "an interrupt");
    type = value = trace = NULL; /* kept */
  } else {
    e = new_error(PJRT_Error_Code_INVALID_ARGUMENT, "shardy-convert: %s: %s: %s", what,
                  n ? n : "exception", t ? t : "(no message)");
  }
  decref(name), decref(text), decref(type), decref(value), decref(trace);
  return e;
}

/* *out = MODULE:FUNCTION, imported once (the GIL held). The GIL orders its write before every
 * later read, but the GIL is CPython's, which ThreadSanitizer does not watch (tests/plugin/
 * tsan.supp): the pointer is written and read atomically, so that what TSan sees orders them. */
static PJRT_Error *import_function(const char *spec, PyObject **out) {
  if (__atomic_load_n(out, __ATOMIC_ACQUIRE) != NULL) return NULL;
  char module[512];
  snprintf(module, sizeof module, "%s", spec);
  char *colon = strchr(module, ':');
  if (colon == NULL)
    return new_error(PJRT_Error_Code_INVALID_ARGUMENT,
                     "shardy-convert: SHARDY_CONVERT_HOOK=%s is not MODULE:FUNCTION", module);
  *colon = '\0';
  PyObject *mod = py.Import_ImportModule(module);
  if (mod == NULL) return python_error("cannot import the hook");
  PyObject *function = py.Object_GetAttrString(mod, colon + 1);
  __atomic_store_n(out, function, __ATOMIC_RELEASE);
  decref(mod);
  return *out ? NULL : python_error("cannot find the hook");
}

/* Copies item `i` of a tuple of bytes into out. */
static int take_bytes(PyObject *answer, int i, Answer *out) {
  char *data;
  ptrdiff_t size;
  PyObject *item = py.Tuple_GetItem(answer, i);
  if (item == NULL || py.Bytes_AsStringAndSize(item, &data, &size) != 0) return 0;
  out->data[i] = malloc(size > 0 ? (size_t)size : 1);
  if (out->data[i] == NULL) return 0;
  memcpy(out->data[i], data, (size_t)size);
  out->size[i] = (size_t)size;
  return 1;
}

/* fn(*args as bytes) -> a tuple of `want` bytes objects (up to `optional` more: absent ones
 * are left NULL, size 0), or a str: an error message. */
static PJRT_Error *call_locked(PyObject *fn, int n, const char **data, const size_t *size, int want,
                               int optional, Answer *out) {
  PyObject *call = py.Tuple_New(n);
  if (call == NULL) return python_error("cannot call the hook");
  for (int i = 0; i < n; i++) {
    PyObject *item = py.Bytes_FromStringAndSize(data[i], (ptrdiff_t)size[i]);
    if (item == NULL) { /* a MemoryError: never a NULL in the argument tuple */
      decref(call);
      return python_error("cannot pass the program to the hook");
    }
    py.Tuple_SetItem(call, i, item); /* steals the reference */
  }
  PyObject *answer = py.Object_CallObject(fn, call);
  decref(call);
  if (answer == NULL) return python_error("the hook raised");
  PJRT_Error *e = NULL;
  ptrdiff_t items = py.Tuple_Size(answer);
  if (items < want || items > want + optional) {
    py.Err_Clear();
    const char *message = py.Unicode_AsUTF8AndSize(answer, NULL);
    py.Err_Clear();
    e = new_error(PJRT_Error_Code_INVALID_ARGUMENT, "shardy-convert: %s",
                  message ? message : "the hook returned neither bytes objects nor a message");
  } else {
    for (int i = 0; i < items && e == NULL; i++)
      if (!take_bytes(answer, i, out)) e = python_error("the hook's answer is not bytes objects");
  }
  decref(answer);
  return e;
}

/* Calls MODULE:FUNCTION `spec` (cached in *fn) with the GIL. */
static PJRT_Error *call_python(const char *spec, PyObject **fn, int n, const char **data,
                               const size_t *size, int want, int optional, Answer *out) {
  if (!have_python || !py.IsInitialized())
    return new_error(PJRT_Error_Code_FAILED_PRECONDITION,
                     "shardy-convert PJRT wrapper: no Python interpreter in this process to run "
                     "the conversion hook in");
  int state = py.GILState_Ensure();
  PJRT_Error *e = import_function(spec, fn);
  if (e == NULL)
    e = call_locked(__atomic_load_n(fn, __ATOMIC_ACQUIRE), n, data, size, want, optional, out);
  py.GILState_Release(state);
  return e;
}

/* ---- The overridden entries ---------------------------------------------------------------- */

/* A copy of a caller's argument struct, however long it is (a newer caller's has fields past the
 * ones declared here: they must reach the plugin too), zero-padded to at least `known` bytes. */
static void *copy_args(const void *args, size_t known) {
  size_t size = *(const size_t *)args;
  void *copy = calloc(1, size > known ? size : known);
  if (copy != NULL) memcpy(copy, args, size);
  return copy;
}

/* An error of the plugin's the caller will not see. */
static void drop_plugin_error(PJRT_Error *error) {
  if (error == NULL) return;
  PJRT_Error_Destroy_Args args = {.struct_size = PJRT_Error_Destroy_Args_STRUCT_SIZE,
                                  .error = error};
  real->header.PJRT_Error_Destroy(&args);
}

/* Destroys what the plugin made for a call that fails. */
static void release_loaded_executable(PJRT_LoadedExecutable *executable) {
  PJRT_LoadedExecutable_Destroy_Args args = {
      .struct_size = PJRT_LoadedExecutable_Destroy_Args_STRUCT_SIZE, .executable = executable};
  drop_plugin_error(real->header.PJRT_LoadedExecutable_Destroy(&args));
}

static void release_executable(PJRT_Executable *executable) {
  PJRT_Executable_Destroy_Args args = {.struct_size = PJRT_Executable_Destroy_Args_STRUCT_SIZE,
                                       .executable = executable};
  drop_plugin_error(real->header.PJRT_Executable_Destroy(&args));
}

/* ---- The executable cache ------------------------------------------------------------------- */

/* torch_xla compiles the same small programs again and again (ReplicateShardedData on every
 * read of a sharded tensor): the hook's conversion cache answers at once, but the plugin would
 * compile each again. A compile whose answer is one compiled before (the hook's key, a digest
 * of everything the plugin is handed: program, format, options, device order), on the same
 * client, gets the executable it got before: the same PJRT_LoadedExecutable*, handed out again.
 *
 * One record per executable handed out more than once may be: `handles` counts the callers'
 * (each compile that returned it is one; each PJRT_LoadedExecutable_Destroy takes one away) and
 * `cached` is the cache's own. The plugin's executable is destroyed when neither is left.
 * The cache holds at most `capacity` executables ($SHARDY_CONVERT_EXECUTABLE_CACHE, default
 * 64; 0: none, every compile goes to the plugin); the least recently handed out goes first.
 * PJRT_LoadedExecutable_Delete of one (its device memory freed) takes it out of the cache, and
 * PJRT_Client_Destroy those of that client. Records are changed under the lock only; the plugin
 * is called with no lock held. */
#define KEY_SIZE 32
#define DEFAULT_CAPACITY 64

typedef struct Shared {
  struct Shared *next;
  PJRT_Client *client;
  unsigned char key[KEY_SIZE];
  PJRT_LoadedExecutable *executable;
  unsigned long used; /* when it was last handed out (a tick of `ticks`) */
  int handles;        /* compiles that returned it and have not destroyed it */
  int cached;         /* the cache holds it: a compile may get it again */
} Shared;

static Shared *shared;
static size_t capacity = DEFAULT_CAPACITY, num_cached;
static unsigned long ticks;
static long cache_counts[3]; /* hits, misses (compiles that went to the plugin), evictions */
static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;

/* $SHARDY_CONVERT_EXECUTABLE_CACHE: a count of executables, default 64; 0 switches it off. */
static void read_capacity(void) {
  const char *text = getenv("SHARDY_CONVERT_EXECUTABLE_CACHE");
  char *end;
  long n = text != NULL && *text != '\0' ? strtol(text, &end, 10) : -1;
  if (n >= 0 && *end == '\0') capacity = (size_t)n;
}

/* For tests: the cache's hits, misses, evictions and the executables it holds now. */
__attribute__((visibility("default"))) void ShardyConvertExecutableCache(long counts[4]) {
  pthread_mutex_lock(&shared_lock);
  for (int i = 0; i < 3; i++) counts[i] = cache_counts[i];
  counts[3] = (long)num_cached;
  pthread_mutex_unlock(&shared_lock);
}

/* The plugin's executable destroyed, with its device-order record. */
static void destroy_loaded(PJRT_LoadedExecutable *executable) {
  forget_order(executable);
  release_loaded_executable(executable);
}

/* Destroys the executables of `doomed` (records no one holds any more, unlinked). */
static void destroy_shared(Shared *doomed) {
  while (doomed != NULL) {
    Shared *next = doomed->next;
    destroy_loaded(doomed->executable);
    free(doomed);
    doomed = next;
  }
}

/* Takes `r` out of the cache (the lock held); onto *doomed when no caller holds it either. */
static void uncache(Shared *r, Shared **doomed) {
  if (!r->cached) return;
  r->cached = 0, num_cached--;
  if (r->handles > 0) return;
  Shared **link = &shared;
  while (*link != r) link = &(*link)->next;
  *link = r->next;
  r->next = *doomed, *doomed = r;
}

/* Whether a compile of these arguments is the plugin's program and options alone: an
 * extension other than the profiler's (torch_xla passes its trace context, which changes no
 * program), or fields of a newer caller's struct the wrapper does not know, might make the same
 * program compile otherwise. */
static int cacheable(const PJRT_Client_Compile_Args *args) {
  const PJRT_Extension_Base *x = args->extension_start;
  while (x != NULL && x->type == PJRT_Extension_Type_Profiler) x = x->next;
  return capacity > 0 && args->struct_size <= PJRT_Client_Compile_Args_STRUCT_SIZE && x == NULL &&
         args->program->struct_size <= PJRT_Program_STRUCT_SIZE &&
         args->program->extension_start == NULL;
}

/* The executable cached for (client, key), one more handle taken on it; NULL: none. */
static PJRT_LoadedExecutable *take_cached(PJRT_Client *client, const char *key) {
  pthread_mutex_lock(&shared_lock);
  Shared *r = shared;
  while (r != NULL && !(r->cached && r->client == client && memcmp(r->key, key, KEY_SIZE) == 0))
    r = r->next;
  PJRT_LoadedExecutable *executable = r != NULL ? r->executable : NULL;
  if (r != NULL) r->handles++, r->used = ++ticks;
  cache_counts[r != NULL ? 0 : 1]++;
  pthread_mutex_unlock(&shared_lock);
  return executable;
}

/* Caches `fresh` (its executable just compiled, its one handle the caller's), the least
 * recently used going when the cache is full. Another thread's compile of the same program
 * may have come first: then `fresh` is freed and its executable stays the caller's alone. */
static void cache_put(Shared *fresh) {
  Shared *doomed = NULL;
  pthread_mutex_lock(&shared_lock);
  Shared *r = shared;
  while (r != NULL &&
         !(r->cached && r->client == fresh->client && memcmp(r->key, fresh->key, KEY_SIZE) == 0))
    r = r->next;
  if (r == NULL) {
    fresh->handles = 1, fresh->cached = 1, fresh->used = ++ticks;
    fresh->next = shared, shared = fresh, num_cached++;
    fresh = NULL;
  }
  while (num_cached > capacity) {
    Shared *oldest = NULL;
    for (r = shared; r != NULL; r = r->next)
      if (r->cached && (oldest == NULL || r->used < oldest->used)) oldest = r;
    uncache(oldest, &doomed);
    cache_counts[2]++;
  }
  pthread_mutex_unlock(&shared_lock);
  free(fresh);
  destroy_shared(doomed);
}

/* A caller's PJRT_LoadedExecutable_Destroy: 1 when it only gave its handle back (the cache or
 * another caller still holds the executable), 0 when the plugin's executable goes. */
static int give_back_handle(PJRT_LoadedExecutable *executable) {
  pthread_mutex_lock(&shared_lock);
  Shared **link = &shared;
  while (*link != NULL && (*link)->executable != executable) link = &(*link)->next;
  Shared *r = *link;
  int kept = r != NULL && (--r->handles > 0 || r->cached);
  if (r != NULL && !kept) *link = r->next;
  pthread_mutex_unlock(&shared_lock);
  if (!kept) free(r);
  return kept;
}

/* PJRT_LoadedExecutable_Delete frees the executable's device memory: it is never handed out
 * again. What no caller holds any more (a caller that deletes what it destroyed) is returned,
 * to be destroyed after the plugin's Delete. */
static Shared *forget_deleted(PJRT_LoadedExecutable *executable) {
  Shared *doomed = NULL;
  pthread_mutex_lock(&shared_lock);
  Shared *r = shared;
  while (r != NULL && r->executable != executable) r = r->next;
  if (r != NULL) uncache(r, &doomed);
  pthread_mutex_unlock(&shared_lock);
  return doomed;
}

/* Before a client goes, the cache lets go of its executables. */
static void forget_client(PJRT_Client *client) {
  Shared *doomed = NULL;
  pthread_mutex_lock(&shared_lock);
  Shared *r = shared;
  while (r != NULL) {
    Shared *next = r->next;
    if (r->client == client) uncache(r, &doomed);
    r = next;
  }
  pthread_mutex_unlock(&shared_lock);
  destroy_shared(doomed);
}

/* hook(code, format, options) -> (code, format, options, order as int32s or b"", and optionally
 * the executable cache's key: KEY_SIZE bytes). */
static PJRT_Error *client_compile(PJRT_Client_Compile_Args *args) {
  PJRT_Error *e = CHECK_ARGS(PJRT_Client_Compile_Args, args);
  if (e == NULL && args->program == NULL)
    e = new_error(PJRT_Error_Code_INVALID_ARGUMENT,
                  "shardy-convert PJRT wrapper: PJRT_Client_Compile without a program");
  if (e == NULL) e = CHECK_ARGS(PJRT_Program, args->program);
  if (e != NULL) return e;
  Answer r;
  memset(&r, 0, sizeof r);
  const char *spec = getenv("SHARDY_CONVERT_HOOK");
  const PJRT_Program *given = args->program;
  const char *data[3] = {given->code, given->format, args->compile_options};
  size_t size[3] = {given->code_size, given->format_size, args->compile_options_size};
  e = call_python(spec && *spec ? spec : "shardy_convert.plugin.wrapper:on_compile", &hook, 3, data,
                  size, 4, 1, &r);
  /* The same program compiled before on this client: its executable again. Else the record
   * that will cache the new one is made first: out of memory, the compile fails before the
   * plugin compiles anything. */
  const char *key = e == NULL && r.size[4] == KEY_SIZE && cacheable(args) ? r.data[4] : NULL;
  PJRT_LoadedExecutable *cached = key != NULL ? take_cached(args->client, key) : NULL;
  if (cached != NULL) {
    args->executable = cached;
    free_answer(&r);
    return NULL;
  }
  Shared *fresh = NULL;
  if (key != NULL && (fresh = fault("cache") ? NULL : calloc(1, sizeof(Shared))) == NULL)
    e = (PJRT_Error *)&out_of_memory;
  /* The caller owns its program and options: the plugin compiles new ones, made of the hook's
   * bytes, in copies of the caller's structs (whatever else they hold goes along). */
  PJRT_Program *program = e == NULL ? copy_args(given, PJRT_Program_STRUCT_SIZE) : NULL;
  PJRT_Client_Compile_Args *call =
      program != NULL ? copy_args(args, PJRT_Client_Compile_Args_STRUCT_SIZE) : NULL;
  if (e == NULL && call == NULL) e = (PJRT_Error *)&out_of_memory;
  if (e == NULL) {
    program->code = r.data[0], program->code_size = r.size[0];
    program->format = r.data[1], program->format_size = r.size[1];
    call->program = program;
    call->compile_options = r.data[2], call->compile_options_size = r.size[2];
    /* The real compile takes seconds: let other Python threads run meanwhile. */
    void *thread = py.IsInitialized() && py.GILState_Check() ? py.Eval_SaveThread() : NULL;
    e = real->header.PJRT_Client_Compile(call);
    if (thread != NULL) py.Eval_RestoreThread(thread);
  }
  /* An executable whose order cannot be recorded would run on the caller's devices as given:
   * the compile fails instead, the executable destroyed. */
  if (e == NULL && r.size[3] > 0) {
    e = remember_order("compile", call->executable, (const int32_t *)r.data[3],
                       r.size[3] / sizeof(int32_t));
    if (e != NULL) release_loaded_executable(call->executable);
  }
  if (e == NULL) args->executable = call->executable;
  if (e == NULL && fresh != NULL) {
    fresh->client = args->client, fresh->executable = call->executable;
    memcpy(fresh->key, key, KEY_SIZE);
    cache_put(fresh);
    fresh = NULL;
  }
  free(fresh), free(program), free(call), free_answer(&r);
  return e;
}

/* The PJRT_ExecuteOptions size a plugin of API `minor` requires (XLA's plugins refuse a smaller
 * one): 0.75 ends after `context`, 0.76 adds call_location, 0.78 the task incarnations; after
 * 0.96, the newest layout known here (a plugin accepts a larger struct than its own). */
static size_t execute_options_size(int minor) {
  if (minor < 76) return PJRT_STRUCT_SIZE(PJRT_ExecuteOptions, context);
  if (minor < 78) return PJRT_STRUCT_SIZE(PJRT_ExecuteOptions, call_location);
  if (minor < 97) return PJRT_STRUCT_SIZE(PJRT_ExecuteOptions, incarnation_ids);
  return NEWEST_KNOWN_EXECUTE_OPTIONS_SIZE;
}

/* Execute's arguments as the plugin gets them: options padded for it, lists in its order. */
typedef struct {
  PJRT_LoadedExecutable_Execute_Args *call; /* a copy of the caller's, or the caller's own */
  unsigned char *options;
  PJRT_Buffer *const **in;
  PJRT_Buffer ***out;
  PJRT_Event **events;
} Execute;

static void free_execute(Execute *x, const PJRT_LoadedExecutable_Execute_Args *theirs) {
  if (x->call != theirs) free(x->call);
  free(x->options), free(x->in), free(x->out), free(x->events);
}

/* An older caller's PJRT_ExecuteOptions, zero-padded to the size the plugin requires. */
static PJRT_Error *pad_options(Execute *x) {
  size_t given = x->call->options->struct_size;
  if (given >= plugin_options_size) return NULL;
  x->options = calloc(1, plugin_options_size);
  if (x->options == NULL) return (PJRT_Error *)&out_of_memory;
  memcpy(x->options, x->call->options, given);
  ((PJRT_ExecuteOptions *)x->options)->struct_size = plugin_options_size;
  x->call->options = (PJRT_ExecuteOptions *)x->options;
  return NULL;
}

/* Another device order: the plugin's list k is the caller's list order[k]. Only the fields
 * declared here can be put in that order: a newer caller's struct may have per-device lists
 * this wrapper does not know of, so it is refused rather than run on the wrong devices. */
static PJRT_Error *permute(Execute *x, const Ordered *o) {
  const PJRT_LoadedExecutable_Execute_Args *c = x->call;
  if (c->struct_size > PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE)
    return new_error(PJRT_Error_Code_UNIMPLEMENTED,
                     "shardy-convert PJRT wrapper: PJRT_LoadedExecutable_Execute_Args of %zu "
                     "bytes, from a newer PJRT "
                     "C API than the %zu this wrapper knows: this executable runs in another "
                     "device order, and fields past execute_device cannot be put in that order",
                     c->struct_size, (size_t)PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE);
  x->in = malloc(o->n * sizeof *x->in), x->out = malloc(o->n * sizeof *x->out);
  x->events = c->device_complete_events ? calloc(o->n, sizeof *x->events) : NULL;
  if (x->in == NULL || x->out == NULL || (c->device_complete_events && x->events == NULL))
    return (PJRT_Error *)&out_of_memory;
  for (size_t k = 0; k < o->n; k++) {
    x->in[k] = c->argument_lists[o->order[k]];
    x->out[k] = c->output_lists[o->order[k]];
  }
  x->call->argument_lists = x->in, x->call->output_lists = x->out;
  if (x->events != NULL) x->call->device_complete_events = x->events;
  return NULL;
}

static PJRT_Error *loaded_executable_execute(PJRT_LoadedExecutable_Execute_Args *args) {
  PJRT_Error *e = CHECK_ARGS(PJRT_LoadedExecutable_Execute_Args, args);
  if (e == NULL && args->options == NULL)
    e = new_error(PJRT_Error_Code_INVALID_ARGUMENT,
                  "shardy-convert PJRT wrapper: PJRT_LoadedExecutable_Execute without options");
  if (e != NULL) return e;
  const Ordered *o = hold_order(args->executable);
  int permuted =
      o != NULL && !o->identity && args->num_devices == o->n && args->execute_device == NULL;
  Execute x = {.call = args};
  if (permuted || args->options->struct_size < plugin_options_size) {
    x.call = copy_args(args, PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE);
    if (x.call == NULL) x.call = args, e = (PJRT_Error *)&out_of_memory;
  }
  if (e == NULL) e = pad_options(&x);
  if (e == NULL && permuted) e = permute(&x, o);
  if (e == NULL) e = real->header.PJRT_LoadedExecutable_Execute(x.call);
  if (e == NULL && x.events != NULL)
    for (size_t k = 0; k < o->n; k++) args->device_complete_events[o->order[k]] = x.events[k];
  free_execute(&x, args);
  release_order(o);
  return e;
}

static PJRT_Error *loaded_executable_addressable_devices(
    PJRT_LoadedExecutable_AddressableDevices_Args *args) {
  PJRT_Error *e = CHECK_ARGS(PJRT_LoadedExecutable_AddressableDevices_Args, args);
  if (e == NULL) e = real->header.PJRT_LoadedExecutable_AddressableDevices(args);
  Ordered *o = e == NULL ? hold_order(args->executable) : NULL;
  if (o == NULL || args->num_addressable_devices != o->n) {
    release_order(o);
    return e;
  }
  pthread_mutex_lock(&ordered_lock);
  if (o->devices == NULL && (o->devices = malloc(o->n * sizeof *o->devices)) != NULL)
    for (size_t k = 0; k < o->n; k++) o->devices[o->order[k]] = args->addressable_devices[k];
  PJRT_Device **devices = o->devices;
  pthread_mutex_unlock(&ordered_lock);
  release_order(o);
  if (devices == NULL) return (PJRT_Error *)&out_of_memory;
  args->addressable_devices = devices;
  return NULL;
}

static PJRT_Error *loaded_executable_get_executable(
    PJRT_LoadedExecutable_GetExecutable_Args *args) {
  PJRT_Error *e = CHECK_ARGS(PJRT_LoadedExecutable_GetExecutable_Args, args);
  if (e == NULL) e = real->header.PJRT_LoadedExecutable_GetExecutable(args);
  Ordered *o = e == NULL ? hold_order(args->loaded_executable) : NULL;
  Ordered *known = o != NULL ? hold_order(args->executable) : NULL;
  if (o != NULL && known == NULL &&
      (e = remember_order("get_executable", args->executable, o->order, o->n)) != NULL) {
    release_executable(args->executable); /* its shardings would read in the plugin's order */
    args->executable = NULL;
  }
  release_order(known), release_order(o);
  return e;
}

static PJRT_Error *loaded_executable_destroy(PJRT_LoadedExecutable_Destroy_Args *args) {
  PJRT_Error *e = CHECK_ARGS(PJRT_LoadedExecutable_Destroy_Args, args);
  if (e != NULL || give_back_handle(args->executable)) return e;
  forget_order(args->executable);
  return real->header.PJRT_LoadedExecutable_Destroy(args);
}

static PJRT_Error *loaded_executable_delete(PJRT_LoadedExecutable_Delete_Args *args) {
  PJRT_Error *e = CHECK_ARGS(PJRT_LoadedExecutable_Delete_Args, args);
  if (e != NULL) return e;
  Shared *doomed = forget_deleted(args->executable);
  e = real->header.PJRT_LoadedExecutable_Delete(args);
  destroy_shared(doomed);
  return e;
}

static PJRT_Error *client_destroy(PJRT_Client_Destroy_Args *args) {
  PJRT_Error *e = CHECK_ARGS(PJRT_Client_Destroy_Args, args);
  if (e != NULL) return e;
  forget_client(args->client);
  return real->header.PJRT_Client_Destroy(args);
}

static PJRT_Error *executable_destroy(PJRT_Executable_Destroy_Args *args) {
  PJRT_Error *e = CHECK_ARGS(PJRT_Executable_Destroy_Args, args);
  if (e != NULL) return e;
  forget_order(args->executable);
  return real->header.PJRT_Executable_Destroy(args);
}

/* The plugin's optimized program with its shardings in the caller's partition ids, kept in the
 * record (under the lock; the first one made wins). */
static PJRT_Error *relabel(Ordered *o, PJRT_Executable *executable) {
  PJRT_Program program = {.struct_size = PJRT_Program_STRUCT_SIZE};
  PJRT_Executable_OptimizedProgram_Args call = {
      .struct_size = PJRT_Executable_OptimizedProgram_Args_STRUCT_SIZE,
      .executable = executable,
      .program = &program,
  };
  PJRT_Error *e = real->header.PJRT_Executable_OptimizedProgram(&call);
  char *code = e == NULL ? malloc(program.code_size ? program.code_size : 1) : NULL;
  if (e != NULL) return e;
  if (code == NULL) return (PJRT_Error *)&out_of_memory;
  program.code = code;
  e = real->header.PJRT_Executable_OptimizedProgram(&call);
  Answer r;
  memset(&r, 0, sizeof r);
  const char *data[3] = {code, program.format, (const char *)o->order};
  size_t size[3] = {program.code_size, program.format_size, o->n * sizeof(int32_t)};
  if (e == NULL)
    e = call_python("shardy_convert.plugin.wrapper:relabel_program", &relabeller, 3, data, size, 1,
                    0, &r);
  free(code);
  if (e == NULL) {
    pthread_mutex_lock(&ordered_lock);
    if (o->program == NULL) {
      o->program = r.data[0], o->program_size = r.size[0];
      o->format = program.format, o->format_size = program.format_size;
      r.data[0] = NULL;
    }
    pthread_mutex_unlock(&ordered_lock);
  }
  free_answer(&r);
  return e;
}

/* The record's relabelled program (made on first ask) into the caller's program struct. */
static PJRT_Error *copy_program(Ordered *o, PJRT_Executable_OptimizedProgram_Args *args) {
  pthread_mutex_lock(&ordered_lock);
  int made = o->program != NULL;
  pthread_mutex_unlock(&ordered_lock);
  PJRT_Error *e = made ? NULL : relabel(o, args->executable);
  if (e != NULL) return e;
  pthread_mutex_lock(&ordered_lock);
  Ordered kept = *o;
  pthread_mutex_unlock(&ordered_lock);
  PJRT_Program *p = args->program;
  p->format = kept.format, p->format_size = kept.format_size;
  if (p->code == NULL) {
    p->code_size = kept.program_size;
    return NULL;
  }
  if (p->code_size < kept.program_size)
    return new_error(PJRT_Error_Code_INVALID_ARGUMENT,
                     "PJRT_Executable_OptimizedProgram: a buffer of %zu bytes for %zu",
                     p->code_size, kept.program_size);
  memcpy(p->code, kept.program, kept.program_size);
  p->code_size = kept.program_size;
  return NULL;
}

static PJRT_Error *executable_optimized_program(PJRT_Executable_OptimizedProgram_Args *args) {
  PJRT_Error *e = CHECK_ARGS(PJRT_Executable_OptimizedProgram_Args, args);
  if (e == NULL && args->program == NULL)
    e = new_error(
        PJRT_Error_Code_INVALID_ARGUMENT,
        "shardy-convert PJRT wrapper: PJRT_Executable_OptimizedProgram without a program");
  if (e == NULL) e = CHECK_ARGS(PJRT_Program, args->program);
  Ordered *o = e == NULL ? hold_order(args->executable) : NULL;
  if (e != NULL || o == NULL)
    return e != NULL ? e : real->header.PJRT_Executable_OptimizedProgram(args);
  e = copy_program(o, args);
  release_order(o);
  return e;
}

static void free_assignment(PJRT_DeviceAssignmentSerialized *serialized) {
  free(serialized);
}

/* The plugin's device assignment (partition k on its device k) in the caller's partition ids.
 * API 0.79: torch_xla 2.9 (0.75) never asks; a newer caller would see the permuted one. */
static PJRT_Error *loaded_executable_get_device_assignment(
    PJRT_LoadedExecutable_GetDeviceAssignment_Args *args) {
  PJRT_Error *e = CHECK_ARGS(PJRT_LoadedExecutable_GetDeviceAssignment_Args, args);
  if (e == NULL) e = real->header.PJRT_LoadedExecutable_GetDeviceAssignment(args);
  Ordered *o = e == NULL ? hold_order(args->executable) : NULL;
  if (o == NULL) return e;
  Answer r;
  memset(&r, 0, sizeof r);
  const char *data[2] = {args->serialized_bytes, (const char *)o->order};
  size_t size[2] = {args->serialized_bytes_size, o->n * sizeof(int32_t)};
  e = call_python("shardy_convert.plugin.wrapper:caller_device_assignment", &reassign, 2, data,
                  size, 1, 0, &r);
  release_order(o);
  if (args->serialized_device_assignment_deleter != NULL)
    args->serialized_device_assignment_deleter(args->serialized_device_assignment);
  args->serialized_bytes = e == NULL ? r.data[0] : NULL;
  args->serialized_bytes_size = e == NULL ? r.size[0] : 0;
  args->serialized_device_assignment =
      (PJRT_DeviceAssignmentSerialized *)(e == NULL ? r.data[0] : NULL);
  args->serialized_device_assignment_deleter = free_assignment;
  if (e != NULL) free_answer(&r);
  return e;
}

/* ---- Loading ----------------------------------------------------------------------------------
 */

/* Served when there is no plugin to wrap: a table of API 0.99 (through PJRT_Error_ForEachPayload),
 * the error entries the wrapper's, every other call an error saying why, each entry a stub of its
 * own type. */
static void stand_in(void) {
  api = calloc(1, sizeof(LaterApi));
  if (api == NULL) return;
  size_t size = PJRT_STRUCT_SIZE(LaterApi, FOR_EACH_PAYLOAD_ENTRY);
  api->header.struct_size = size;
  api->header.pjrt_api_version.struct_size = PJRT_Api_Version_STRUCT_SIZE;
  api->header.pjrt_api_version.major_version = PJRT_API_MAJOR;
  api->header.pjrt_api_version.minor_version = 99;
#define INSTALL_STUB(name) api->header.name = unavailable_##name;
#define INSTALL_LATER_STUB(name) api->name = unavailable_##name;
  ENTRIES_0_81(INSTALL_STUB)
  HEADER_LATER_ENTRIES(INSTALL_STUB)
  LATER_ENTRIES(INSTALL_LATER_STUB)
  install_error_entries(api, size);
}

/* The plugin's table with the wrapper's entries, cut at the newest API version the wrapper
 * knows: a caller reads no entry past struct_size (PJRT's rule), so it never hands the wrapper's
 * errors or partitions to an entry added later, which the wrapper could not intercept. A newer
 * plugin serves such a caller as a plugin of that version, which its compatibility covers. */
static int wrap(const PJRT_Api *theirs, const char *path) {
  size_t needed = PJRT_STRUCT_SIZE(PJRT_Api, PJRT_LoadedExecutable_Execute);
  if (theirs->struct_size < needed) {
    snprintf(load_problem, sizeof load_problem,
             "the plugin %s is too old: its PJRT_Api has %zu bytes, at least %zu are needed", path,
             theirs->struct_size, needed);
    return 0;
  }
  size_t size =
      theirs->struct_size < NEWEST_KNOWN_API_SIZE ? theirs->struct_size : NEWEST_KNOWN_API_SIZE;
  api = calloc(1, size > sizeof(LaterApi) ? size : sizeof(LaterApi));
  if (api == NULL) return 0;
  memcpy(api, theirs, size);
  real = (const LaterApi *)theirs, real_size = theirs->struct_size;
  api->header.struct_size = size;
  int minor = theirs->pjrt_api_version.minor_version;
  if (minor > NEWEST_KNOWN_MINOR) api->header.pjrt_api_version.minor_version = NEWEST_KNOWN_MINOR;
  plugin_options_size = execute_options_size(minor);
  install_error_entries(api, size);
  api->header.PJRT_Client_Compile = client_compile;
  api->header.PJRT_LoadedExecutable_Execute = loaded_executable_execute;
  api->header.PJRT_LoadedExecutable_AddressableDevices = loaded_executable_addressable_devices;
  api->header.PJRT_LoadedExecutable_GetExecutable = loaded_executable_get_executable;
  api->header.PJRT_LoadedExecutable_Destroy = loaded_executable_destroy;
  api->header.PJRT_LoadedExecutable_Delete = loaded_executable_delete;
  api->header.PJRT_Client_Destroy = client_destroy;
  api->header.PJRT_Executable_Destroy = executable_destroy;
  api->header.PJRT_Executable_OptimizedProgram = executable_optimized_program;
  if (REAL(header.PJRT_LoadedExecutable_GetDeviceAssignment) != NULL)
    api->header.PJRT_LoadedExecutable_GetDeviceAssignment = loaded_executable_get_device_assignment;
  return 1;
}

/* Every build of this wrapper exports this marker, so that neither the wrapper nor the tools
 * that configure it (shardy_convert.plugin.plugin_library reads it from the ELF headers) take a
 * wrapper for the plugin to wrap: wrapping itself, GetPjrtApi would dlopen itself and call its
 * own GetPjrtApi inside pthread_once, which never returns. */
__attribute__((visibility("default"))) const char ShardyConvertPjrtWrapper[] =
    "shardy-convert PJRT plugin wrapper";
#define MARKER "ShardyConvertPjrtWrapper"

static void refuse(const char *path, const char *why) {
  snprintf(load_problem, sizeof load_problem,
           "SHARDY_CONVERT_PLUGIN=%s is %s, not a plugin to wrap (a wrapper around a wrapper would "
           "load itself forever): set it to the real plugin's library",
           path, why);
  fprintf(stderr, "shardy-convert PJRT wrapper: %s\n", load_problem);
}

static const PJRT_Api *plugin_api(void *lib, const char *path) {
  if (lib == NULL) {
    snprintf(load_problem, sizeof load_problem, "cannot load SHARDY_CONVERT_PLUGIN=%s: %s", path,
             dlerror());
    return NULL;
  }
  if (dlsym(lib, MARKER) != NULL) { /* this very library, or another build of it */
    refuse(path, "shardy-convert's PJRT plugin wrapper (it exports " MARKER ")");
    return NULL;
  }
  const PJRT_Api *(*get)(void) = (const PJRT_Api *(*)(void))dlsym(lib, "GetPjrtApi");
  const PJRT_Api *theirs = get ? get() : NULL;
  if (get == NULL)
    snprintf(load_problem, sizeof load_problem,
             "SHARDY_CONVERT_PLUGIN=%s is not a PJRT plugin (no GetPjrtApi)", path);
  else if (theirs == NULL && load_problem[0] == '\0')
    snprintf(load_problem, sizeof load_problem, "the plugin %s returned no PJRT_Api", path);
  return theirs;
}

static __thread int loading; /* this thread is inside load(): a GetPjrtApi now is re-entry */
static int loaded;           /* load() has run (atomic: read without its once) */

static void load(void) {
  loading = 1;
  have_python = find_python();
  const char *path = getenv("SHARDY_CONVERT_PLUGIN");
  if (path == NULL || *path == '\0') {
    snprintf(load_problem, sizeof load_problem,
             "no plugin to wrap: set SHARDY_CONVERT_PLUGIN to the path of a PJRT plugin library");
  } else {
    const PJRT_Api *theirs = plugin_api(dlopen(path, RTLD_NOW | RTLD_LOCAL), path);
    if (theirs != NULL && wrap(theirs, path)) {
      read_capacity();
      loading = 0;
      __atomic_store_n(&loaded, 1, __ATOMIC_RELEASE);
      return;
    }
  }
  stand_in();
  loading = 0;
  __atomic_store_n(&loaded, 1, __ATOMIC_RELEASE);
}

/* Re-entry (the plugin being loaded calls back into this library's GetPjrtApi on the same
 * thread, as a wrapper of itself would) gets NULL and a message, never the deadlock of a
 * pthread_once called from inside its own initializer. */
static int reentered(void) {
  if (!loading) return 0;
  snprintf(load_problem, sizeof load_problem,
           "GetPjrtApi was called again while the wrapper was loading its plugin "
           "(SHARDY_CONVERT_PLUGIN names a library that loads this wrapper)");
  fprintf(stderr, "shardy-convert PJRT wrapper: %s\n", load_problem);
  return 1;
}

__attribute__((visibility("default"))) const void *GetPjrtApi(void) {
  if (reentered()) return NULL;
  pthread_once(&load_once, load);
  return api;
}

/* ---- The plugin's StableHLO version, for the hook ------------------------------------------ */

static char stablehlo_version[64]; /* "1.13.3"; "" when the plugin names none */
static pthread_once_t version_once = PTHREAD_ONCE_INIT;

/* The wrapped plugin's "stablehlo_current_version" attribute (three int64s), as text. */
static void read_stablehlo_version(void) {
  if (real == NULL || REAL(header.PJRT_Plugin_Attributes) == NULL) return;
  PJRT_Plugin_Attributes_Args args = {.struct_size = PJRT_Plugin_Attributes_Args_STRUCT_SIZE};
  PJRT_Error *error = real->header.PJRT_Plugin_Attributes(&args);
  if (error != NULL) return drop_plugin_error(error);
  static const char name[] = "stablehlo_current_version";
  for (size_t i = 0; i < args.num_attributes; i++) {
    const PJRT_NamedValue *value = &args.attributes[i];
    if (value->name_size != sizeof name - 1 || memcmp(value->name, name, sizeof name - 1) != 0 ||
        value->type != PJRT_NamedValue_kInt64List || value->value_size != 3)
      continue;
    const int64_t *v = value->int64_array_value;
    snprintf(stablehlo_version, sizeof stablehlo_version, "%lld.%lld.%lld", (long long)v[0],
             (long long)v[1], (long long)v[2]);
  }
}

/* For the hook: the StableHLO version the wrapped plugin reads up to ("" when it names none, or
 * before a framework's GetPjrtApi loaded it: this never loads it): a portable artifact the hook
 * writes from an HLO proto targets the newest version both the plugin and jaxlib know, as a
 * framework targets its plugin. */
__attribute__((visibility("default"))) const char *ShardyConvertPluginStablehloVersion(void) {
  if (!__atomic_load_n(&loaded, __ATOMIC_ACQUIRE)) return "";
  pthread_once(&version_once, read_stablehlo_version);
  return stablehlo_version;
}

/* For tests and the CLI: why the wrapper serves the stand-in table ("" when it wraps a plugin). */
__attribute__((visibility("default"))) const char *ShardyConvertWrapperProblem(void) {
  if (reentered()) return load_problem;
  pthread_once(&load_once, load);
  return load_problem;
}
