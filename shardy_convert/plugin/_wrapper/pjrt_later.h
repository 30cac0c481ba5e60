/* The parts of PJRT C API versions later than the pjrt_c_api.h this wrapper is built against that
 * the wrapper must know, in this project's own words.
 *
 * The build compiles against the pjrt_c_api.h an installed package ships (xla-cpu-pjrt: API 0.81,
 * see setup.py). Callers and plugins may be newer than that header; what the wrapper has to know
 * of their versions is declared here, each part only where the header is older than the version
 * that brought it (PJRT_API_MINOR), from OpenXLA's xla/pjrt/c/CHANGELOG.md and the 0.114 layout:
 *
 *   - the PJRT_Api entries of 0.82..0.99, in their order, as X-macro lists (a stub of each
 *     one's type in the stand-in table), to reach PJRT_Error_ForEachPayload (0.99): it receives
 *     error objects, so the wrapper must intercept it;
 *   - PJRT_Error_ForEachPayload's arguments and visitor;
 *   - the size of PJRT_Api at 0.114, the newest version the wrapper was checked against (what it
 *     hands out of a newer plugin's table, see pjrt_shardy_wrapper.c);
 *   - the function table later versions put at the start of every PJRT_Error (a caller built
 *     against them may call an error's functions through it instead of the PJRT_Api entries);
 *   - the PJRT_ExecuteOptions fields after incarnation_ids (0.78), up to 0.114.
 *
 * tests/plugin/newer_pjrt_plugin.c (a plugin of a newer version, built by the tests) includes it
 * too. */
#ifndef SHARDY_CONVERT_PJRT_LATER_H_
#define SHARDY_CONVERT_PJRT_LATER_H_

#include <stdbool.h>
#include <stddef.h>

#include "pjrt_c_api.h"

#if PJRT_API_MAJOR != 0 || PJRT_API_MINOR < 81
#error "the PJRT plugin wrapper needs a pjrt_c_api.h of API 0.81 or newer (0.x)"
#endif

/* The newest API version whose entries and argument structs this project has checked. */
#define NEWEST_KNOWN_MINOR 114

/* ---- PJRT_Error_ForEachPayload (0.99) ---------------------------------------------------- */

#if PJRT_API_MINOR < 99
/* Calls `visitor` once for each (key, value) payload of `error`. */
typedef void (*PJRT_Error_PayloadVisitor)(const char *key, size_t key_size, const char *value,
                                          size_t value_size, void *user_arg);

typedef struct PJRT_Error_ForEachPayload_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const PJRT_Error *error;
  PJRT_Error_PayloadVisitor visitor;
  void *user_arg;
} PJRT_Error_ForEachPayload_Args;
#define PJRT_Error_ForEachPayload_Args_STRUCT_SIZE \
  PJRT_STRUCT_SIZE(PJRT_Error_ForEachPayload_Args, user_arg)

typedef PJRT_Error *PJRT_Error_ForEachPayload(PJRT_Error_ForEachPayload_Args *args);
#endif

/* ---- PJRT_Api: the entries of 0.82..0.98 --------------------------------------------------- */

/* Each of them, as every entry but PJRT_Error_Destroy and _Message, is
 * `PJRT_Error *NAME(NAME_Args *args)`. For each version, LATER_<minor>(X) lists the entries that
 * version added which the header lacks (members of LaterApi after the header's), HEADER_<minor>(X)
 * those it added which the header has (members of PJRT_Api): one of the two is empty. The
 * wrapper's stand-in table gives each entry a stub of its own type from these lists. */
#if PJRT_API_MINOR < 82
#define LATER_82(X) X(PJRT_Client_CreateErrorBuffer)
#define HEADER_82(X)
#else
#define LATER_82(X)
#define HEADER_82(X) X(PJRT_Client_CreateErrorBuffer)
#endif
#if PJRT_API_MINOR < 83
#define LATER_83(X) X(PJRT_AsyncHostToDeviceTransferManager_TransferLiteral)
#define HEADER_83(X)
#else
#define LATER_83(X)
#define HEADER_83(X) X(PJRT_AsyncHostToDeviceTransferManager_TransferLiteral)
#endif
#if PJRT_API_MINOR < 84
#define LATER_84(X) X(PJRT_Buffer_CopyRawToHostFuture)
#define HEADER_84(X)
#else
#define LATER_84(X)
#define HEADER_84(X) X(PJRT_Buffer_CopyRawToHostFuture)
#endif
#if PJRT_API_MINOR < 85
#define LATER_85(X) X(PJRT_Device_PoisonExecution)
#define HEADER_85(X)
#else
#define LATER_85(X)
#define HEADER_85(X) X(PJRT_Device_PoisonExecution)
#endif
#if PJRT_API_MINOR < 86
#define LATER_86(X) X(PJRT_Device_CreateAsyncTrackingEvent) X(PJRT_AsyncTrackingEvent_Destroy)
#define HEADER_86(X)
#else
#define LATER_86(X)
#define HEADER_86(X) X(PJRT_Device_CreateAsyncTrackingEvent) X(PJRT_AsyncTrackingEvent_Destroy)
#endif
#if PJRT_API_MINOR < 87
#define LATER_87(X) X(PJRT_Executable_GetCompileOptions)
#define HEADER_87(X)
#else
#define LATER_87(X)
#define HEADER_87(X) X(PJRT_Executable_GetCompileOptions)
#endif
#if PJRT_API_MINOR < 88
#define LATER_88(X) X(PJRT_Buffer_DonateWithControlDependency)
#define HEADER_88(X)
#else
#define LATER_88(X)
#define HEADER_88(X) X(PJRT_Buffer_DonateWithControlDependency)
#endif
#if PJRT_API_MINOR < 89
#define LATER_89(X) X(PJRT_Event_Create) X(PJRT_Event_Set)
#define HEADER_89(X)
#else
#define LATER_89(X)
#define HEADER_89(X) X(PJRT_Event_Create) X(PJRT_Event_Set)
#endif
#if PJRT_API_MINOR < 92
#define LATER_92(X) X(PJRT_Device_GetAttributes)
#define HEADER_92(X)
#else
#define LATER_92(X)
#define HEADER_92(X) X(PJRT_Device_GetAttributes)
#endif
#if PJRT_API_MINOR < 95
#define LATER_95(X) X(PJRT_Client_Load)
#define HEADER_95(X)
#else
#define LATER_95(X)
#define HEADER_95(X) X(PJRT_Client_Load)
#endif
#if PJRT_API_MINOR < 96
#define LATER_96(X) X(PJRT_LoadedExecutable_AddressableDeviceLogicalIds)
#define HEADER_96(X)
#else
#define LATER_96(X)
#define HEADER_96(X) X(PJRT_LoadedExecutable_AddressableDeviceLogicalIds)
#endif
#if PJRT_API_MINOR < 98
#define LATER_98(X) X(PJRT_Buffer_Bitcast)
#define HEADER_98(X)
#else
#define LATER_98(X)
#define HEADER_98(X) X(PJRT_Buffer_Bitcast)
#endif

/* The entries of 0.82..0.98 the header lacks, and those it has. */
#define LATER_ENTRIES(X) \
  LATER_82(X)            \
  LATER_83(X)            \
  LATER_84(X)            \
  LATER_85(X)            \
  LATER_86(X)            \
  LATER_87(X)            \
  LATER_88(X)            \
  LATER_89(X)            \
  LATER_92(X)            \
  LATER_95(X)            \
  LATER_96(X)            \
  LATER_98(X)
#define HEADER_LATER_ENTRIES(X) \
  HEADER_82(X)                  \
  HEADER_83(X)                  \
  HEADER_84(X)                  \
  HEADER_85(X)                  \
  HEADER_86(X)                  \
  HEADER_87(X)                  \
  HEADER_88(X)                  \
  HEADER_89(X)                  \
  HEADER_92(X)                  \
  HEADER_95(X)                  \
  HEADER_96(X)                  \
  HEADER_98(X)

/* An entry's arguments, by the tag every pjrt_c_api.h gives them (`typedef struct NAME_Args
 * {...} NAME_Args`): the same type whether a header declares them or not. */
#define DECLARE_LATER_ARGS(name) struct name##_Args;
LATER_ENTRIES(DECLARE_LATER_ARGS)
#define DECLARE_LATER_ENTRY(name) PJRT_Error *(*name)(struct name##_Args * args);

/* An entry after 0.99 (no stand-in serves it, and a wrapped plugin's is forwarded untouched):
 * only a place, a function pointer. */
typedef void (*LaterEntry)(void);

typedef struct {
  PJRT_Api header;
  LATER_ENTRIES(DECLARE_LATER_ENTRY)
#if PJRT_API_MINOR < 99
  PJRT_Error_ForEachPayload *PJRT_Error_ForEachPayload;
#endif
} LaterApi;

/* The member of a LaterApi that is the PJRT_Error_ForEachPayload entry, whichever declares it. */
#if PJRT_API_MINOR < 99
#define FOR_EACH_PAYLOAD_ENTRY PJRT_Error_ForEachPayload
#else
#define FOR_EACH_PAYLOAD_ENTRY header.PJRT_Error_ForEachPayload
#endif

/* PJRT_Api's size at 0.114: after PJRT_Error_ForEachPayload come
 * PJRT_TopologyDescription_Fingerprint (0.101), PJRT_Executable_ParameterMemoryKinds (0.102),
 * PJRT_Device_ClearMemoryStats, PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace and
 * PJRT_TopologyDescription_GetMemorySpaceKindIds: five entries, none of which receives an error
 * object or names a partition. */
#define NEWEST_KNOWN_API_SIZE \
  (PJRT_STRUCT_SIZE(LaterApi, FOR_EACH_PAYLOAD_ENTRY) + 5 * sizeof(LaterEntry))

/* ---- The function table at the start of an error (after 0.105, by 0.114) ------------------- */

/* Later headers define `struct PJRT_Error { const PJRT_Error_FunctionTable *vtable; }`: an error
 * object starts with a pointer to this table, and a caller may use it directly. */
typedef struct {
  size_t struct_size;
  size_t instance_size; /* the size of the error object it describes */
  PJRT_Extension_Base *extension_start;
  void (*destroy)(PJRT_Error *error);
  void (*message)(const PJRT_Error *error, const char **message, size_t *message_size);
  PJRT_Error_Code (*get_code)(const PJRT_Error *error);
  void (*for_each_payload)(const PJRT_Error *error, PJRT_Error_PayloadVisitor visitor,
                           void *user_arg);
} ErrorFunctionTable;
#define ErrorFunctionTable_STRUCT_SIZE PJRT_STRUCT_SIZE(ErrorFunctionTable, for_each_payload)

/* ---- PJRT_ExecuteOptions after incarnation_ids (0.78) -------------------------------------- */

/* What follows incarnation_ids at 0.114: multi_slice_config (0.97), then
 * use_major_to_minor_data_layout_for_callbacks, hlo_output_callbacks and their count. Zero is
 * each one's "not used". */
typedef struct {
  void *multi_slice_config;
  bool use_major_to_minor_data_layout_for_callbacks;
  void *hlo_output_callbacks;
  size_t num_hlo_output_callbacks;
} ExecuteOptionsAfterIncarnations;

#define NEWEST_KNOWN_EXECUTE_OPTIONS_SIZE                   \
  (PJRT_STRUCT_SIZE(PJRT_ExecuteOptions, incarnation_ids) + \
   PJRT_STRUCT_SIZE(ExecuteOptionsAfterIncarnations, num_hlo_output_callbacks))

#endif /* SHARDY_CONVERT_PJRT_LATER_H_ */
