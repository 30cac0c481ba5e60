/* A PJRT plugin of a newer API version than the wrapper is built against, for the tests
 * (tests/plugin/test_newer_plugin.py builds it with cc in a temporary folder).
 *
 * It reports API 0.$NEWER_PJRT_MINOR (99, or 114 and later) and forwards to the plugin named by
 * $NEWER_PJRT_BASE (xla-cpu-pjrt, API 0.81), adding what a plugin of that version has and the
 * base lacks:
 *
 *   - PJRT_Error_ForEachPayload (0.99), and errors of its own that carry a payload and start
 *     with the function table of later versions;
 *   - for a version after 0.114, two more entries, unknown to the wrapper; the first one takes an
 *     error object, as a later PJRT_Error_* entry would;
 *   - the PJRT_ExecuteOptions check of XLA's plugins of 0.114: a smaller struct than its own is
 *     refused (an older caller's options must reach it padded).
 *
 * It records every error object its entries are handed (NewerPluginSawError), so a test can
 * prove that no error the wrapper made ever reached it. PJRT_Client_Create with the create
 * option "newer_plugin_refuse" fails with one of its own errors. It counts the executables it
 * made and not yet destroyed (NewerPluginLiveExecutables), so a test can prove that the wrapper
 * destroys what it does not hand on, and the compiles it did (NewerPluginCompiles), so a test can
 * prove that the wrapper's executable cache answered a compile. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pjrt_c_api.h"
#include "pjrt_later.h"

#define EXPORT __attribute__((visibility("default")))
#define PAYLOAD_KEY "shardy-convert.test/origin"
#define PAYLOAD_VALUE "newer plugin"
#define REFUSE "newer_plugin_refuse"

/* The table: through 0.114, then the two unknown entries. */
#define UNKNOWN_ENTRIES 2
static union {
  LaterApi api;
  unsigned char bytes[NEWEST_KNOWN_API_SIZE + UNKNOWN_ENTRIES * sizeof(LaterEntry)];
} table;
static const PJRT_Api *base;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* ---- Its own errors, and every error it is handed -------------------------------------------- */

typedef struct {
  const ErrorFunctionTable *vtable;
  PJRT_Error_Code code;
  char message[256];
} OwnError;

#define MAX_SEEN 4096
static const void *seen[MAX_SEEN];
static size_t num_seen;
static OwnError *own[MAX_SEEN];
static size_t num_own;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void saw(const void *error) {
  pthread_mutex_lock(&lock);
  if (num_seen < MAX_SEEN) seen[num_seen++] = error;
  pthread_mutex_unlock(&lock);
}

EXPORT int NewerPluginSawError(const void *error) {
  pthread_mutex_lock(&lock);
  int found = 0;
  for (size_t i = 0; i < num_seen && !found; i++) found = seen[i] == error;
  pthread_mutex_unlock(&lock);
  return found;
}

static OwnError *is_own(const PJRT_Error *error) {
  pthread_mutex_lock(&lock);
  OwnError *found = NULL;
  for (size_t i = 0; i < num_own && found == NULL; i++)
    if ((const PJRT_Error *)own[i] == error) found = own[i];
  pthread_mutex_unlock(&lock);
  return found;
}

static void own_destroy(PJRT_Error *error) {
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < num_own; i++)
    if ((PJRT_Error *)own[i] == error) own[i] = own[--num_own];
  pthread_mutex_unlock(&lock);
  free(error);
}

static void own_message(const PJRT_Error *error, const char **message, size_t *size) {
  *message = ((const OwnError *)error)->message;
  *size = strlen(*message);
}

static PJRT_Error_Code own_code(const PJRT_Error *error) {
  return ((const OwnError *)error)->code;
}

static void own_payloads(const PJRT_Error *error, PJRT_Error_PayloadVisitor visitor, void *arg) {
  (void)error;
  visitor(PAYLOAD_KEY, strlen(PAYLOAD_KEY), PAYLOAD_VALUE, strlen(PAYLOAD_VALUE), arg);
}

static const ErrorFunctionTable own_table = {
    .struct_size = ErrorFunctionTable_STRUCT_SIZE,
    .instance_size = sizeof(OwnError),
    .destroy = own_destroy,
    .message = own_message,
    .get_code = own_code,
    .for_each_payload = own_payloads,
};

static PJRT_Error *own_error(PJRT_Error_Code code, const char *message) {
  OwnError *e = calloc(1, sizeof(OwnError));
  if (e == NULL) abort(); /* a test plugin */
  e->vtable = &own_table, e->code = code;
  snprintf(e->message, sizeof e->message, "newer plugin: %s", message);
  pthread_mutex_lock(&lock);
  if (num_own < MAX_SEEN) own[num_own++] = e;
  pthread_mutex_unlock(&lock);
  return (PJRT_Error *)e;
}

static void error_destroy(PJRT_Error_Destroy_Args *args) {
  saw(args->error);
  if (is_own(args->error)) return own_destroy(args->error);
  base->PJRT_Error_Destroy(args);
}

static void error_message(PJRT_Error_Message_Args *args) {
  saw(args->error);
  if (is_own(args->error)) return own_message(args->error, &args->message, &args->message_size);
  base->PJRT_Error_Message(args);
}

static PJRT_Error *error_get_code(PJRT_Error_GetCode_Args *args) {
  saw(args->error);
  if (!is_own(args->error)) return base->PJRT_Error_GetCode(args);
  args->code = own_code(args->error);
  return NULL;
}

/* The base (0.81) has no payloads to visit. */
static PJRT_Error *error_for_each_payload(PJRT_Error_ForEachPayload_Args *args) {
  saw(args->error);
  if (is_own(args->error)) own_payloads(args->error, args->visitor, args->user_arg);
  return NULL;
}

/* The first entry after 0.114: it is handed an error object. */
typedef struct {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const PJRT_Error *error;
} UnknownErrorArgs;

static PJRT_Error *unknown_error_entry(UnknownErrorArgs *args) {
  saw(args->error);
  return NULL;
}

static PJRT_Error *unknown_entry(void *args) {
  (void)args;
  return own_error(PJRT_Error_Code_UNIMPLEMENTED, "an entry after 0.114");
}

/* ---- Entries of a newer plugin ----------------------------------------------------------------
 */

static PJRT_Error *client_create(PJRT_Client_Create_Args *args) {
  for (size_t i = 0; i < args->num_options; i++)
    if (args->create_options[i].name_size == strlen(REFUSE) &&
        memcmp(args->create_options[i].name, REFUSE, strlen(REFUSE)) == 0)
      return own_error(PJRT_Error_Code_INVALID_ARGUMENT, "refused on request");
  return base->PJRT_Client_Create(args);
}

/* Loaded executables and executables made and not destroyed; compiles done. */
static long live_loaded, live_executables, compiles;

EXPORT long NewerPluginCompiles(void) {
  pthread_mutex_lock(&lock);
  long done = compiles;
  pthread_mutex_unlock(&lock);
  return done;
}

EXPORT long NewerPluginLiveExecutables(int loaded) {
  pthread_mutex_lock(&lock);
  long live = loaded ? live_loaded : live_executables;
  pthread_mutex_unlock(&lock);
  return live;
}

static void count(long *counter, long change) {
  pthread_mutex_lock(&lock);
  *counter += change;
  pthread_mutex_unlock(&lock);
}

static PJRT_Error *client_compile(PJRT_Client_Compile_Args *args) {
  PJRT_Error *e = base->PJRT_Client_Compile(args);
  count(&compiles, 1);
  if (e == NULL) count(&live_loaded, 1);
  return e;
}

static PJRT_Error *loaded_executable_destroy(PJRT_LoadedExecutable_Destroy_Args *args) {
  PJRT_Error *e = base->PJRT_LoadedExecutable_Destroy(args);
  if (e == NULL) count(&live_loaded, -1);
  return e;
}

static PJRT_Error *get_executable(PJRT_LoadedExecutable_GetExecutable_Args *args) {
  PJRT_Error *e = base->PJRT_LoadedExecutable_GetExecutable(args);
  if (e == NULL) count(&live_executables, 1);
  return e;
}

static PJRT_Error *executable_destroy(PJRT_Executable_Destroy_Args *args) {
  PJRT_Error *e = base->PJRT_Executable_Destroy(args);
  if (e == NULL) count(&live_executables, -1);
  return e;
}

static size_t last_execute_args_size;

EXPORT size_t NewerPluginLastExecuteArgsSize(void) {
  return last_execute_args_size;
}

/* As XLA's plugins of 0.114: the caller's options must be at least as large as its own. */
static PJRT_Error *execute(PJRT_LoadedExecutable_Execute_Args *args) {
  last_execute_args_size = args->struct_size;
  size_t needed = NEWEST_KNOWN_EXECUTE_OPTIONS_SIZE, given = args->options->struct_size;
  if (given < needed) {
    char message[128];
    snprintf(message, sizeof message, "Unexpected PJRT_ExecuteOptions size: expected %zu, got %zu",
             needed, given);
    return own_error(PJRT_Error_Code_INVALID_ARGUMENT, message);
  }
  return base->PJRT_LoadedExecutable_Execute(args);
}

static void load(void) {
  const char *path = getenv("NEWER_PJRT_BASE");
  void *lib = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
  const PJRT_Api *(*get)(void) = lib ? (const PJRT_Api *(*)(void))dlsym(lib, "GetPjrtApi") : NULL;
  base = get ? get() : NULL;
  if (base == NULL) {
    fprintf(stderr, "newer plugin: cannot load NEWER_PJRT_BASE=%s\n", path ? path : "");
    return;
  }
  const char *minor_text = getenv("NEWER_PJRT_MINOR");
  int minor = minor_text ? atoi(minor_text) : 120;
  memcpy(&table.api.header, base, sizeof(PJRT_Api));
  table.api.header.pjrt_api_version.minor_version = minor;
  table.api.header.PJRT_Error_Destroy = error_destroy;
  table.api.header.PJRT_Error_Message = error_message;
  table.api.header.PJRT_Error_GetCode = error_get_code;
  table.api.header.PJRT_Client_Create = client_create;
  table.api.header.PJRT_LoadedExecutable_Execute = execute;
  table.api.header.PJRT_Client_Compile = client_compile;
  table.api.header.PJRT_LoadedExecutable_Destroy = loaded_executable_destroy;
  table.api.header.PJRT_LoadedExecutable_GetExecutable = get_executable;
  table.api.header.PJRT_Executable_Destroy = executable_destroy;
  table.api.FOR_EACH_PAYLOAD_ENTRY = error_for_each_payload;
  /* 0.99 ends with ForEachPayload; 0.114 five entries later (not implemented here: NULL). */
  table.api.header.struct_size = minor < NEWEST_KNOWN_MINOR
                                     ? PJRT_STRUCT_SIZE(LaterApi, FOR_EACH_PAYLOAD_ENTRY)
                                     : NEWEST_KNOWN_API_SIZE;
  if (minor <= NEWEST_KNOWN_MINOR) return;
  LaterEntry *unknown = (LaterEntry *)(table.bytes + NEWEST_KNOWN_API_SIZE);
  unknown[0] = (LaterEntry)unknown_error_entry;
  unknown[1] = (LaterEntry)unknown_entry;
  table.api.header.struct_size = sizeof table.bytes;
}

EXPORT const PJRT_Api *GetPjrtApi(void) {
  pthread_once(&once, load);
  return base ? &table.api.header : NULL;
}
