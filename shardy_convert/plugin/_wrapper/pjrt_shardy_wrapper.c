/* shardy-convert's PJRT plugin wrapper: a PJRT C-API plugin that wraps another one.
 *
 * A framework (torch_xla, JAX, ...) loads this library as its PJRT plugin. `GetPjrtApi` dlopens
 * the real plugin named by $SHARDY_CONVERT_PLUGIN, copies its PJRT_Api table and overrides five
 * entries:
 *
 *   PJRT_Client_Compile            each program and its CompileOptionsProto go through a Python
 *                                  function in the host process first ($SHARDY_CONVERT_HOOK,
 *                                  default shardy_convert.plugin.wrapper:on_compile), which returns the
 *                                  Shardy program and the options to compile it with;
 *   PJRT_LoadedExecutable_Execute  PJRT_ExecuteOptions grew between API versions (0.75: 80 bytes,
 *                                  0.81: 112); a caller's older struct is forwarded as a
 *                                  zero-padded copy of the size the plugin expects;
 *   PJRT_Error_{Destroy,Message,GetCode}  so the wrapper can return errors of its own (the
 *                                  hook's located message); the plugin's errors pass through.
 *
 * Custom device orders: XLA's partitioner computes some ops wrongly on explicit device lists, so
 * the hook may hand back an iota-mesh program plus the order it runs in: partition k on the
 * device the caller knows as position order[k] of its device assignment (the hook rewrites the
 * assignment in the options). The caller keeps its own view of the executable: the wrapper
 * permutes the per-device argument/output lists and events of Execute, lists the addressable
 * devices in the caller's order, and relabels the parameter/output shardings of the optimized
 * program (what PJRT clients read them from) back into the caller's partition ids:
 *
 *   PJRT_LoadedExecutable_{AddressableDevices,GetExecutable,Destroy}, PJRT_Executable_{
 *   OptimizedProgram,Destroy}, and, when the plugin has it (API 0.79),
 *   PJRT_LoadedExecutable_GetDeviceAssignment (the caller's assignment, not the permuted one).
 *   Queries added after 0.81 that also expose partition ids (PJRT_Executable_GetCompileOptions
 *   0.87, the Shardings extension 0.91, PJRT_LoadedExecutable_AddressableDeviceLogicalIds 0.96)
 *   are not translated: they reach the plugin as they are.
 *
 * The Python C API is looked up in the host process at run time (dlsym), so the library links
 * against no libpython; in a process without a Python interpreter every compile fails with a
 * PJRT error saying so. Nothing here aborts the host: every failure is a PJRT_Error.
 *
 * Only the parts of the PJRT C API this file touches are declared below, laid out as in
 * OpenXLA's xla/pjrt/c/pjrt_c_api.h (append-only structs: struct_size, extension_start, then
 * the fields in declaration order; the PJRT_Api function table in declaration order).
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

/* ---- The PJRT C API parts used here ------------------------------------------------------ */

typedef struct PJRT_Error PJRT_Error; /* opaque: the plugin's, or a WrapperError below */
typedef PJRT_Error *(*PJRT_Fn)(void *args);

typedef struct {
  size_t struct_size;
  void *extension_start;
  int major_version;
  int minor_version;
} PJRT_Api_Version;

/* PJRT_Api: a header, then one function pointer per API entry in declaration order. */
typedef struct {
  size_t struct_size;
  void *extension_start;
  PJRT_Api_Version pjrt_api_version;
} PJRT_Api_Head;

enum {
  SLOT_ERROR_DESTROY = 0,
  SLOT_ERROR_MESSAGE = 1,
  SLOT_ERROR_GET_CODE = 2,
  SLOT_PLUGIN_INITIALIZE = 3,
  SLOT_CLIENT_COMPILE = 20,
  SLOT_EXECUTABLE_DESTROY = 40,
  SLOT_EXECUTABLE_OPTIMIZED_PROGRAM = 48,
  SLOT_LOADED_EXECUTABLE_DESTROY = 50,
  SLOT_LOADED_EXECUTABLE_GET_EXECUTABLE = 51,
  SLOT_LOADED_EXECUTABLE_ADDRESSABLE_DEVICES = 52,
  SLOT_LOADED_EXECUTABLE_EXECUTE = 55,
  SLOT_LOADED_EXECUTABLE_GET_DEVICE_ASSIGNMENT = 117, /* API 0.79 */
  /* Slots of the stand-in table served when there is no plugin to wrap (see `unavailable`). */
  STAND_IN_SLOTS = 256,
};

typedef struct {
  size_t struct_size;
  void *extension_start;
  PJRT_Error *error;
} PJRT_Error_Destroy_Args;

typedef struct {
  size_t struct_size;
  void *extension_start;
  const PJRT_Error *error;
  const char *message; /* out */
  size_t message_size; /* out */
} PJRT_Error_Message_Args;

typedef struct {
  size_t struct_size;
  void *extension_start;
  const PJRT_Error *error;
  int code; /* out: PJRT_Error_Code */
} PJRT_Error_GetCode_Args;

enum {
  PJRT_ERROR_CANCELLED = 1,
  PJRT_ERROR_INVALID_ARGUMENT = 3,
  PJRT_ERROR_FAILED_PRECONDITION = 9
};

typedef struct {
  size_t struct_size;
  void *extension_start;
  char *code;
  size_t code_size;
  const char *format;
  size_t format_size;
} PJRT_Program;

typedef struct {
  size_t struct_size;
  void *extension_start;
  void *client;
  const PJRT_Program *program;
  const char *compile_options;
  size_t compile_options_size;
  void *executable; /* out */
} PJRT_Client_Compile_Args;

typedef struct {
  size_t struct_size;
  void *extension_start;
  void *executable;
  void *options; /* PJRT_ExecuteOptions*, whose first member is its struct_size */
  void ***argument_lists; /* [num_devices][num_args] PJRT_Buffer* */
  size_t num_devices;
  size_t num_args;
  void ***output_lists;           /* [num_devices] arrays the plugin fills */
  void **device_complete_events;  /* [num_devices] or NULL */
  void *execute_device;           /* one device only, or NULL */
} PJRT_LoadedExecutable_Execute_Args;

typedef struct {
  size_t struct_size;
  void *extension_start;
  void *executable; /* PJRT_LoadedExecutable* or PJRT_Executable* */
} PJRT_Executable_Destroy_Args;

typedef struct {
  size_t struct_size;
  void *extension_start;
  void *loaded_executable;
  void *executable; /* out */
} PJRT_LoadedExecutable_GetExecutable_Args;

typedef struct {
  size_t struct_size;
  void *extension_start;
  void *executable;
  void *const *addressable_devices; /* out, owned by the plugin (here: by the wrapper) */
  size_t num_addressable_devices;   /* out */
} PJRT_LoadedExecutable_AddressableDevices_Args;

typedef struct {
  size_t struct_size;
  void *extension_start;
  void *executable;
  PJRT_Program *program; /* in/out: code NULL asks for code_size */
} PJRT_Executable_OptimizedProgram_Args;

typedef struct {
  size_t struct_size;
  void *extension_start;
  void *executable;                                      /* a PJRT_LoadedExecutable* */
  const char *serialized_bytes;                          /* out: a DeviceAssignmentProto */
  size_t serialized_bytes_size;                          /* out */
  void *serialized_device_assignment;                    /* out: what the deleter frees */
  void (*serialized_device_assignment_deleter)(void *);  /* out */
} PJRT_LoadedExecutable_GetDeviceAssignment_Args;

/* PJRT_ExecuteOptions sizes by API minor version: 0.75 ends after `context` (80 bytes), 0.76
 * adds call_location (88), 0.78 num_tasks, task_ids, incarnation_ids (112). Later versions add
 * more; a plugin newer than 0.81 is offered the largest layout known here (0.114: 144), which its
 * "size >= expected" check accepts when it knows no more fields than that. */
static size_t execute_options_size(int minor) {
  if (minor < 76) return 80;
  if (minor < 78) return 88;
  if (minor <= 81) return 112;
  return 144;
}
#define PADDED_EXECUTE_OPTIONS 256

/* A caller's argument struct copied whole (a newer caller's may be longer than the layout
 * declared here: its extra fields must reach the plugin too), zero-padded past its end. */
#define ARGS_COPY 512
typedef union {
  unsigned char bytes[ARGS_COPY];
  max_align_t align;
} ArgsCopy;

static void *copy_args(ArgsCopy *copy, const void *args) {
  size_t size = *(const size_t *)args;
  if (size > sizeof copy->bytes) return NULL;
  memset(copy, 0, sizeof *copy);
  memcpy(copy->bytes, args, size);
  return copy->bytes;
}

/* ---- Errors of the wrapper's own ----------------------------------------------------------- */

typedef struct WrapperError {
  struct WrapperError *next; /* the live list, so a pointer is known to be ours */
  int code;
  size_t size;
  char message[];
} WrapperError;

static WrapperError *live_errors;
static pthread_mutex_t errors_lock = PTHREAD_MUTEX_INITIALIZER;

static PJRT_Error *new_error(int code, const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  int size = vsnprintf(NULL, 0, format, ap);
  va_end(ap);
  if (size < 0) size = 0;
  WrapperError *e = malloc(sizeof(WrapperError) + (size_t)size + 1);
  if (e == NULL) return NULL; /* out of memory: nothing better to do than report success */
  va_start(ap, format);
  vsnprintf(e->message, (size_t)size + 1, format, ap);
  va_end(ap);
  e->code = code;
  e->size = (size_t)size;
  pthread_mutex_lock(&errors_lock);
  e->next = live_errors;
  live_errors = e;
  pthread_mutex_unlock(&errors_lock);
  return (PJRT_Error *)e;
}

/* Takes `e` off the live list when it is ours (remove) or only looks it up. */
static WrapperError *find_error(const PJRT_Error *e, int remove) {
  pthread_mutex_lock(&errors_lock);
  WrapperError **link = &live_errors;
  while (*link != NULL && (const PJRT_Error *)*link != e) link = &(*link)->next;
  WrapperError *found = *link;
  if (found != NULL && remove) *link = found->next;
  pthread_mutex_unlock(&errors_lock);
  return found;
}

/* ---- The wrapped plugin ---------------------------------------------------------------------- */

static PJRT_Api_Head *api;    /* our copy of the plugin's table (or the stand-in) */
static PJRT_Fn *real;          /* the plugin's own function table */
static size_t plugin_options_size;
static char load_problem[1024];
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static PJRT_Fn *slots_of(PJRT_Api_Head *head) { return (PJRT_Fn *)(head + 1); }

static PJRT_Error *error_destroy(void *a) {
  PJRT_Error_Destroy_Args *args = a;
  WrapperError *ours = find_error(args->error, 1);
  if (ours != NULL) {
    free(ours);
    return NULL;
  }
  return real ? real[SLOT_ERROR_DESTROY](a) : NULL;
}

static PJRT_Error *error_message(void *a) {
  PJRT_Error_Message_Args *args = a;
  WrapperError *ours = find_error(args->error, 0);
  if (ours != NULL) {
    args->message = ours->message;
    args->message_size = ours->size;
    return NULL;
  }
  if (real) return real[SLOT_ERROR_MESSAGE](a);
  args->message = "";
  args->message_size = 0;
  return NULL;
}

static PJRT_Error *error_get_code(void *a) {
  PJRT_Error_GetCode_Args *args = a;
  WrapperError *ours = find_error(args->error, 0);
  if (ours != NULL) {
    args->code = ours->code;
    return NULL;
  }
  return real ? real[SLOT_ERROR_GET_CODE](a) : NULL;
}

/* Every entry of the stand-in table: the wrapper has no plugin to forward to. */
static PJRT_Error *unavailable(void *a) {
  (void)a;
  return new_error(PJRT_ERROR_FAILED_PRECONDITION, "shardy-convert PJRT wrapper: %s",
                   load_problem);
}

/* ---- Executables compiled in another device order ------------------------------------------ */

typedef struct Ordered {
  struct Ordered *next;
  const void *key;      /* a PJRT_LoadedExecutable* or a PJRT_Executable* of one */
  size_t n;
  int32_t *order;       /* the plugin's partition k runs the caller's device list order[k] */
  void **devices;       /* addressable devices in the caller's order (made on first ask) */
  char *program;        /* the optimized program, shardings relabelled (made on first ask) */
  size_t program_size;
  const char *format;   /* the plugin's format string of that program */
  size_t format_size;
} Ordered;

static Ordered *ordered;
static pthread_mutex_t ordered_lock = PTHREAD_MUTEX_INITIALIZER;

static void remember_order(const void *key, const int32_t *order, size_t n) {
  Ordered *o = calloc(1, sizeof(Ordered));
  int32_t *copy = malloc(n * sizeof(int32_t));
  if (o == NULL || copy == NULL) {
    free(o), free(copy);
    return;
  }
  memcpy(copy, order, n * sizeof(int32_t));
  o->key = key, o->n = n, o->order = copy;
  pthread_mutex_lock(&ordered_lock);
  o->next = ordered;
  ordered = o;
  pthread_mutex_unlock(&ordered_lock);
}

static Ordered *find_order(const void *key) {
  pthread_mutex_lock(&ordered_lock);
  Ordered *o = ordered;
  while (o != NULL && o->key != key) o = o->next;
  pthread_mutex_unlock(&ordered_lock);
  return o;
}

static void forget_order(const void *key) {
  pthread_mutex_lock(&ordered_lock);
  Ordered **link = &ordered;
  while (*link != NULL && (*link)->key != key) link = &(*link)->next;
  Ordered *o = *link;
  if (o != NULL) *link = o->next;
  pthread_mutex_unlock(&ordered_lock);
  if (o == NULL) return;
  free(o->order), free(o->devices), free(o->program), free(o);
}

/* ---- The Python side ------------------------------------------------------------------------ */

typedef struct PyObject PyObject;
static struct {
  int (*IsInitialized)(void);
  int (*GILState_Ensure)(void);
  void (*GILState_Release)(int);
  int (*GILState_Check)(void);
  void *(*Eval_SaveThread)(void);
  void (*Eval_RestoreThread)(void *);
  PyObject *(*Import_ImportModule)(const char *);
  PyObject *(*Object_GetAttrString)(PyObject *, const char *);
  PyObject *(*Object_CallObject)(PyObject *, PyObject *);
  PyObject *(*Object_Str)(PyObject *);
  PyObject *(*Tuple_New)(ptrdiff_t);
  int (*Tuple_SetItem)(PyObject *, ptrdiff_t, PyObject *);
  PyObject *(*Tuple_GetItem)(PyObject *, ptrdiff_t);
  ptrdiff_t (*Tuple_Size)(PyObject *);
  PyObject *(*Bytes_FromStringAndSize)(const char *, ptrdiff_t);
  int (*Bytes_AsStringAndSize)(PyObject *, char **, ptrdiff_t *);
  const char *(*Unicode_AsUTF8AndSize)(PyObject *, ptrdiff_t *);
  void (*Err_Fetch)(PyObject **, PyObject **, PyObject **);
  void (*Err_Clear)(void);
  void (*DecRef)(PyObject *);
  int (*Err_GivenExceptionMatches)(PyObject *, PyObject *);
  void (*Err_Restore)(PyObject *, PyObject *, PyObject *);
  int (*AddPendingCall)(int (*)(void *), void *);
  PyObject **Exc_Exception; /* a variable: the address of PyExc_Exception */
} py;
static int have_python;
static PyObject *hook;    /* the compile hook, imported on the first compile */
static PyObject *relabel; /* shardy_convert.plugin.wrapper.relabel_program, imported when needed */
static PyObject *reassign; /* shardy_convert.plugin.wrapper.caller_device_assignment, likewise */

static int find_python(void) {
  static const char *names[] = {
      "Py_IsInitialized",        "PyGILState_Ensure",     "PyGILState_Release",
      "PyGILState_Check",        "PyEval_SaveThread",     "PyEval_RestoreThread",
      "PyImport_ImportModule",   "PyObject_GetAttrString", "PyObject_CallObject",
      "PyObject_Str",            "PyTuple_New",           "PyTuple_SetItem",
      "PyTuple_GetItem",         "PyTuple_Size",          "PyBytes_FromStringAndSize",
      "PyBytes_AsStringAndSize", "PyUnicode_AsUTF8AndSize", "PyErr_Fetch",
      "PyErr_Clear",             "Py_DecRef",             "PyErr_GivenExceptionMatches",
      "PyErr_Restore",           "Py_AddPendingCall",     "PyExc_Exception"};
  void **out = (void **)&py;
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    out[i] = dlsym(RTLD_DEFAULT, names[i]);
    if (out[i] == NULL) return 0;
  }
  return 1;
}

#define MAX_ITEMS 4
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
    e = new_error(PJRT_ERROR_CANCELLED, "shardy-convert: %s during the conversion: the compile "
                  "is abandoned (raised again in the program)", n ? n : "an interrupt");
    type = value = trace = NULL; /* kept */
  } else {
    e = new_error(PJRT_ERROR_INVALID_ARGUMENT, "shardy-convert: %s: %s: %s", what,
                  n ? n : "exception", t ? t : "(no message)");
  }
  decref(name), decref(text), decref(type), decref(value), decref(trace);
  return e;
}

/* *out = MODULE:FUNCTION, imported once (the GIL held). */
static PJRT_Error *import_function(const char *spec, PyObject **out) {
  if (*out != NULL) return NULL;
  char module[512];
  snprintf(module, sizeof module, "%s", spec);
  char *colon = strchr(module, ':');
  if (colon == NULL)
    return new_error(PJRT_ERROR_INVALID_ARGUMENT,
                     "shardy-convert: SHARDY_CONVERT_HOOK=%s is not MODULE:FUNCTION", module);
  *colon = '\0';
  PyObject *mod = py.Import_ImportModule(module);
  if (mod == NULL) return python_error("cannot import the hook");
  *out = py.Object_GetAttrString(mod, colon + 1);
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

/* fn(*args as bytes) -> a tuple of `want` bytes objects, or a str: an error message. */
static PJRT_Error *call_locked(PyObject *fn, int n, const char **data, const size_t *size,
                               int want, Answer *out) {
  PyObject *call = py.Tuple_New(n);
  if (call == NULL) return python_error("cannot call the hook");
  for (int i = 0; i < n; i++)
    py.Tuple_SetItem(call, i, py.Bytes_FromStringAndSize(data[i], (ptrdiff_t)size[i]));
  PyObject *answer = py.Object_CallObject(fn, call);
  decref(call);
  if (answer == NULL) return python_error("the hook raised");
  PJRT_Error *e = NULL;
  if (py.Tuple_Size(answer) != want) {
    py.Err_Clear();
    const char *message = py.Unicode_AsUTF8AndSize(answer, NULL);
    py.Err_Clear();
    e = new_error(PJRT_ERROR_INVALID_ARGUMENT, "shardy-convert: %s",
                  message ? message : "the hook returned neither bytes objects nor a message");
  } else {
    for (int i = 0; i < want && e == NULL; i++)
      if (!take_bytes(answer, i, out)) e = python_error("the hook's answer is not bytes objects");
  }
  decref(answer);
  return e;
}

/* Calls MODULE:FUNCTION `spec` (cached in *fn) with the GIL. */
static PJRT_Error *call_python(const char *spec, PyObject **fn, int n, const char **data,
                               const size_t *size, int want, Answer *out) {
  if (!have_python || !py.IsInitialized())
    return new_error(PJRT_ERROR_FAILED_PRECONDITION,
                     "shardy-convert PJRT wrapper: no Python interpreter in this process to run "
                     "the conversion hook in");
  int state = py.GILState_Ensure();
  PJRT_Error *e = import_function(spec, fn);
  if (e == NULL) e = call_locked(*fn, n, data, size, want, out);
  py.GILState_Release(state);
  return e;
}

/* ---- The overridden entries ---------------------------------------------------------------- */

/* hook(code, format, options) -> (code, format, options, order as int32s or b""). */
static PJRT_Error *client_compile(void *a) {
  PJRT_Client_Compile_Args *args = a;
  Answer r;
  memset(&r, 0, sizeof r);
  const char *spec = getenv("SHARDY_CONVERT_HOOK");
  const char *data[3] = {args->program->code, args->program->format, args->compile_options};
  size_t size[3] = {args->program->code_size, args->program->format_size,
                    args->compile_options_size};
  PJRT_Error *e = call_python(spec && *spec ? spec : "shardy_convert.plugin.wrapper:on_compile", &hook,
                              3, data, size, 4, &r);
  if (e != NULL) {
    free_answer(&r);
    return e;
  }
  /* The caller owns its program and options: compile new ones, made of the hook's bytes. */
  ArgsCopy program_copy, call_copy;
  PJRT_Program *program = copy_args(&program_copy, args->program);
  PJRT_Client_Compile_Args *call = copy_args(&call_copy, args);
  if (program == NULL || call == NULL) {
    free_answer(&r);
    return new_error(PJRT_ERROR_INVALID_ARGUMENT,
                     "shardy-convert PJRT wrapper: a compile argument struct of more than %d "
                     "bytes", ARGS_COPY);
  }
  program->code = r.data[0], program->code_size = r.size[0];
  program->format = r.data[1], program->format_size = r.size[1];
  call->program = program;
  call->compile_options = r.data[2], call->compile_options_size = r.size[2];
  /* The real compile takes seconds: let other Python threads run meanwhile. */
  void *thread = py.IsInitialized() && py.GILState_Check() ? py.Eval_SaveThread() : NULL;
  e = real[SLOT_CLIENT_COMPILE](call);
  if (thread != NULL) py.Eval_RestoreThread(thread);
  args->executable = call->executable;
  if (e == NULL && r.size[3] > 0)
    remember_order(call->executable, (const int32_t *)r.data[3], r.size[3] / sizeof(int32_t));
  free_answer(&r);
  return e;
}

static PJRT_Error *loaded_executable_execute(void *a) {
  ArgsCopy copy; /* fields past the end of an older caller's struct read as zero */
  PJRT_LoadedExecutable_Execute_Args *call = copy_args(&copy, a);
  if (call == NULL) return real[SLOT_LOADED_EXECUTABLE_EXECUTE](a);
  /* An older caller's PJRT_ExecuteOptions, zero-padded to the size the plugin expects. */
  unsigned char options[PADDED_EXECUTE_OPTIONS];
  size_t given = call->options ? *(size_t *)call->options : plugin_options_size;
  if (given < plugin_options_size) {
    memset(options, 0, sizeof options);
    memcpy(options, call->options, given);
    memcpy(options, &plugin_options_size, sizeof plugin_options_size);
    call->options = options;
  }
  /* Another device order: the plugin's list k is the caller's list order[k]. */
  Ordered *o = find_order(call->executable);
  int permute = o != NULL && call->num_devices == o->n && call->execute_device == NULL;
  void ***in = NULL, ***out = NULL, **events = NULL, **theirs = call->device_complete_events;
  if (permute) {
    in = malloc(o->n * sizeof(void **)), out = malloc(o->n * sizeof(void **));
    events = theirs ? calloc(o->n, sizeof(void *)) : NULL;
    if (in == NULL || out == NULL || (theirs && events == NULL)) {
      free(in), free(out), free(events);
      return new_error(PJRT_ERROR_FAILED_PRECONDITION, "shardy-convert: out of memory");
    }
    for (size_t k = 0; k < o->n; k++) {
      in[k] = call->argument_lists[o->order[k]];
      out[k] = call->output_lists[o->order[k]];
    }
    call->argument_lists = in, call->output_lists = out;
    if (events != NULL) call->device_complete_events = events;
  }
  PJRT_Error *e = real[SLOT_LOADED_EXECUTABLE_EXECUTE](call);
  if (e == NULL && events != NULL)
    for (size_t k = 0; k < o->n; k++) theirs[o->order[k]] = events[k];
  free(in), free(out), free(events);
  return e;
}

static PJRT_Error *loaded_executable_addressable_devices(void *a) {
  PJRT_LoadedExecutable_AddressableDevices_Args *args = a;
  PJRT_Error *e = real[SLOT_LOADED_EXECUTABLE_ADDRESSABLE_DEVICES](a);
  Ordered *o = e == NULL ? find_order(args->executable) : NULL;
  if (o == NULL || args->num_addressable_devices != o->n) return e;
  pthread_mutex_lock(&ordered_lock);
  if (o->devices == NULL && (o->devices = malloc(o->n * sizeof(void *))) != NULL)
    for (size_t k = 0; k < o->n; k++) o->devices[o->order[k]] = args->addressable_devices[k];
  pthread_mutex_unlock(&ordered_lock);
  if (o->devices != NULL) args->addressable_devices = o->devices;
  return NULL;
}

static PJRT_Error *loaded_executable_get_executable(void *a) {
  PJRT_LoadedExecutable_GetExecutable_Args *args = a;
  PJRT_Error *e = real[SLOT_LOADED_EXECUTABLE_GET_EXECUTABLE](a);
  Ordered *o = e == NULL ? find_order(args->loaded_executable) : NULL;
  if (o != NULL && find_order(args->executable) == NULL)
    remember_order(args->executable, o->order, o->n);
  return e;
}

static PJRT_Error *loaded_executable_destroy(void *a) {
  forget_order(((PJRT_Executable_Destroy_Args *)a)->executable);
  return real[SLOT_LOADED_EXECUTABLE_DESTROY](a);
}

static PJRT_Error *executable_destroy(void *a) {
  forget_order(((PJRT_Executable_Destroy_Args *)a)->executable);
  return real[SLOT_EXECUTABLE_DESTROY](a);
}

/* The plugin's optimized program with its shardings in the caller's partition ids. */
static PJRT_Error *relabelled_program(Ordered *o, PJRT_Executable_OptimizedProgram_Args *args) {
  PJRT_Program program;
  memset(&program, 0, sizeof program);
  program.struct_size = sizeof program;
  PJRT_Executable_OptimizedProgram_Args call = *args;
  call.struct_size = sizeof call;
  call.program = &program;
  PJRT_Error *e = real[SLOT_EXECUTABLE_OPTIMIZED_PROGRAM](&call);
  char *code = e == NULL ? malloc(program.code_size ? program.code_size : 1) : NULL;
  if (e != NULL || code == NULL) return e;
  program.code = code;
  e = real[SLOT_EXECUTABLE_OPTIMIZED_PROGRAM](&call);
  Answer r;
  memset(&r, 0, sizeof r);
  const char *data[3] = {code, program.format, (const char *)o->order};
  size_t size[3] = {program.code_size, program.format_size, o->n * sizeof(int32_t)};
  if (e == NULL)
    e = call_python("shardy_convert.plugin.wrapper:relabel_program", &relabel, 3, data, size, 1, &r);
  free(code);
  if (e != NULL) {
    free_answer(&r);
    return e;
  }
  pthread_mutex_lock(&ordered_lock);
  if (o->program == NULL) {
    o->program = r.data[0], o->program_size = r.size[0];
    o->format = program.format, o->format_size = program.format_size;
    r.data[0] = NULL;
  }
  pthread_mutex_unlock(&ordered_lock);
  free_answer(&r);
  return NULL;
}

static PJRT_Error *executable_optimized_program(void *a) {
  PJRT_Executable_OptimizedProgram_Args *args = a;
  Ordered *o = find_order(args->executable);
  if (o == NULL) return real[SLOT_EXECUTABLE_OPTIMIZED_PROGRAM](a);
  PJRT_Error *e = o->program == NULL ? relabelled_program(o, args) : NULL;
  if (e != NULL) return e;
  PJRT_Program *p = args->program;
  p->format = o->format, p->format_size = o->format_size;
  if (p->code == NULL) {
    p->code_size = o->program_size;
    return NULL;
  }
  if (p->code_size < o->program_size)
    return new_error(PJRT_ERROR_INVALID_ARGUMENT,
                     "PJRT_Executable_OptimizedProgram: a buffer of %zu bytes for %zu",
                     p->code_size, o->program_size);
  memcpy(p->code, o->program, o->program_size);
  p->code_size = o->program_size;
  return NULL;
}

static void free_assignment(void *serialized) { free(serialized); }

/* The plugin's device assignment (partition k on its device k) in the caller's partition ids.
 * API 0.79: torch_xla 2.9 (0.75) never asks; a newer caller would see the permuted one. */
static PJRT_Error *loaded_executable_get_device_assignment(void *a) {
  PJRT_LoadedExecutable_GetDeviceAssignment_Args *args = a;
  PJRT_Error *e = real[SLOT_LOADED_EXECUTABLE_GET_DEVICE_ASSIGNMENT](a);
  Ordered *o = e == NULL ? find_order(args->executable) : NULL;
  if (o == NULL) return e;
  Answer r;
  memset(&r, 0, sizeof r);
  const char *data[2] = {args->serialized_bytes, (const char *)o->order};
  size_t size[2] = {args->serialized_bytes_size, o->n * sizeof(int32_t)};
  e = call_python("shardy_convert.plugin.wrapper:caller_device_assignment", &reassign, 2, data, size, 1,
                  &r);
  if (args->serialized_device_assignment_deleter != NULL)
    args->serialized_device_assignment_deleter(args->serialized_device_assignment);
  args->serialized_bytes = e == NULL ? r.data[0] : NULL;
  args->serialized_bytes_size = e == NULL ? r.size[0] : 0;
  args->serialized_device_assignment = args->serialized_bytes == NULL ? NULL : r.data[0];
  args->serialized_device_assignment_deleter = free_assignment;
  if (e != NULL) free_answer(&r);
  return e;
}

/* ---- Loading ---------------------------------------------------------------------------------- */

static void stand_in(void) {
  size_t size = sizeof(PJRT_Api_Head) + STAND_IN_SLOTS * sizeof(PJRT_Fn);
  api = calloc(1, size);
  if (api == NULL) return;
  api->struct_size = size;
  api->pjrt_api_version.struct_size = sizeof(PJRT_Api_Version);
  api->pjrt_api_version.major_version = 0;
  api->pjrt_api_version.minor_version = 75;
  PJRT_Fn *slots = slots_of(api);
  for (size_t i = 0; i < STAND_IN_SLOTS; i++) slots[i] = unavailable;
  slots[SLOT_ERROR_DESTROY] = error_destroy;
  slots[SLOT_ERROR_MESSAGE] = error_message;
  slots[SLOT_ERROR_GET_CODE] = error_get_code;
}

static int wrap(const PJRT_Api_Head *theirs, const char *path) {
  size_t needed = sizeof(PJRT_Api_Head) + (SLOT_LOADED_EXECUTABLE_EXECUTE + 1) * sizeof(PJRT_Fn);
  if (theirs->struct_size < needed) {
    snprintf(load_problem, sizeof load_problem,
             "the plugin %s is too old: its PJRT_Api has %zu bytes, at least %zu are needed", path,
             theirs->struct_size, needed);
    return 0;
  }
  api = malloc(theirs->struct_size);
  if (api == NULL) return 0;
  memcpy(api, theirs, theirs->struct_size);
  real = slots_of((PJRT_Api_Head *)theirs);
  plugin_options_size = execute_options_size(theirs->pjrt_api_version.minor_version);
  PJRT_Fn *slots = slots_of(api);
  slots[SLOT_ERROR_DESTROY] = error_destroy;
  slots[SLOT_ERROR_MESSAGE] = error_message;
  slots[SLOT_ERROR_GET_CODE] = error_get_code;
  slots[SLOT_CLIENT_COMPILE] = client_compile;
  slots[SLOT_LOADED_EXECUTABLE_EXECUTE] = loaded_executable_execute;
  slots[SLOT_LOADED_EXECUTABLE_ADDRESSABLE_DEVICES] = loaded_executable_addressable_devices;
  slots[SLOT_LOADED_EXECUTABLE_GET_EXECUTABLE] = loaded_executable_get_executable;
  slots[SLOT_LOADED_EXECUTABLE_DESTROY] = loaded_executable_destroy;
  slots[SLOT_EXECUTABLE_DESTROY] = executable_destroy;
  slots[SLOT_EXECUTABLE_OPTIMIZED_PROGRAM] = executable_optimized_program;
  if (theirs->struct_size >= sizeof(PJRT_Api_Head) +
                                 (SLOT_LOADED_EXECUTABLE_GET_DEVICE_ASSIGNMENT + 1) * sizeof(PJRT_Fn) &&
      real[SLOT_LOADED_EXECUTABLE_GET_DEVICE_ASSIGNMENT] != NULL)
    slots[SLOT_LOADED_EXECUTABLE_GET_DEVICE_ASSIGNMENT] = loaded_executable_get_device_assignment;
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

static const PJRT_Api_Head *plugin_api(void *lib, const char *path) {
  if (lib == NULL) {
    snprintf(load_problem, sizeof load_problem, "cannot load SHARDY_CONVERT_PLUGIN=%s: %s", path,
             dlerror());
    return NULL;
  }
  if (dlsym(lib, MARKER) != NULL) { /* this very library, or another build of it */
    refuse(path, "shardy-convert's PJRT plugin wrapper (it exports " MARKER ")");
    return NULL;
  }
  const PJRT_Api_Head *(*get)(void) = (const PJRT_Api_Head *(*)(void))dlsym(lib, "GetPjrtApi");
  const PJRT_Api_Head *theirs = get ? get() : NULL;
  if (get == NULL)
    snprintf(load_problem, sizeof load_problem,
             "SHARDY_CONVERT_PLUGIN=%s is not a PJRT plugin (no GetPjrtApi)", path);
  else if (theirs == NULL && load_problem[0] == '\0')
    snprintf(load_problem, sizeof load_problem, "the plugin %s returned no PJRT_Api", path);
  return theirs;
}

static __thread int loading; /* this thread is inside load(): a GetPjrtApi now is re-entry */

static void load(void) {
  loading = 1;
  have_python = find_python();
  const char *path = getenv("SHARDY_CONVERT_PLUGIN");
  if (path == NULL || *path == '\0') {
    snprintf(load_problem, sizeof load_problem,
             "no plugin to wrap: set SHARDY_CONVERT_PLUGIN to the path of a PJRT plugin library");
  } else {
    const PJRT_Api_Head *theirs = plugin_api(dlopen(path, RTLD_NOW | RTLD_LOCAL), path);
    if (theirs != NULL && wrap(theirs, path)) {
      loading = 0;
      return;
    }
  }
  stand_in();
  loading = 0;
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

/* For tests and the CLI: why the wrapper serves the stand-in table ("" when it wraps a plugin). */
__attribute__((visibility("default"))) const char *ShardyConvertWrapperProblem(void) {
  if (reentered()) return load_problem;
  pthread_once(&load_once, load);
  return load_problem;
}
