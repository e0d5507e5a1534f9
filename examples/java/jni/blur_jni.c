/* The JNI glue of Blur's Java binding (package org.blur): marshals between
 * org.blur.Native's static methods and the C API (blur/blur.h), nothing more.
 *
 * Each Java BlurClient owns one native_client, malloc'ed here and freed by
 * close(): the C client's memory, a global reference to the Java port (an
 * org.blur.PortAdapter) and a scratch buffer for batches. Java sees its
 * address as a long handle, statuses as ints, data as byte[]s and long[]s.
 *
 * The C port's callbacks call the PortAdapter's methods (method ids cached
 * in JNI_OnLoad) through the JNIEnv of the thread in the current native
 * call: every entry point stores it before calling the SDK, which calls the
 * port synchronously on that thread. A callback fails (returns -1, and the
 * SDK fails closed with a status) when the Java method reports failure or
 * throws; the exception is cleared here. The adapter already turns the
 * app's exceptions into failures, so this is the last line. */
#include <jni.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blur/blur.h"

#ifdef BLUR_JNI_GENERATED_HEADER
/* javac -h's declarations: a signature that drifted from Native.java fails
 * to compile here instead of at run time. */
#include "org_blur_Native.h"
#endif

/* A whole batch (blur_pending_batch fills as many reports as fit, at most
 * 64 of up to ~576 bytes each with the default configuration). */
enum { kBatchCapacity = 64 * 1024 };

typedef struct native_client {
  _Alignas(max_align_t) uint8_t memory[BLUR_CLIENT_MEMORY_SIZE];
  blur_client* client;
  JNIEnv* env;  /* the calling thread's, stored by every entry point */
  jobject port; /* global reference to the org.blur.PortAdapter */
  uint8_t batch[kBatchCapacity];
} native_client;

/* org.blur.PortAdapter, pinned by a global reference, and its methods. */
static jclass adapter_class;
static jmethodID m_entropy, m_read, m_prog, m_erase, m_sync, m_now, m_counter_read,
    m_counter_advance;

/* ---- The C port: upcalls into the PortAdapter ---- */

/* 0 if the upcall returned 0 without an exception, else -1 (cleared). */
static int upcall_result(JNIEnv* env, jint result) {
  if ((*env)->ExceptionCheck(env)) {
    (*env)->ExceptionClear(env);
    return -1;
  }
  return result == 0 ? 0 : -1;
}

static int port_entropy(void* context, uint8_t* out, size_t length) {
  const native_client* c = context;
  JNIEnv* env = c->env;
  if (length > INT32_MAX) return -1;
  jbyteArray array = (*env)->NewByteArray(env, (jsize)length);
  if (array == NULL) return upcall_result(env, -1);
  int result = upcall_result(env, (*env)->CallIntMethod(env, c->port, m_entropy, array));
  if (result == 0) (*env)->GetByteArrayRegion(env, array, 0, (jsize)length, (jbyte*)out);
  (*env)->DeleteLocalRef(env, array);
  return result;
}

static int port_read(void* context, uint32_t block, uint32_t offset, uint8_t* out, uint32_t size) {
  const native_client* c = context;
  JNIEnv* env = c->env;
  if (size > INT32_MAX) return -1;
  jbyteArray array = (*env)->NewByteArray(env, (jsize)size);
  if (array == NULL) return upcall_result(env, -1);
  int result = upcall_result(
      env, (*env)->CallIntMethod(env, c->port, m_read, (jint)block, (jint)offset, array));
  if (result == 0) (*env)->GetByteArrayRegion(env, array, 0, (jsize)size, (jbyte*)out);
  (*env)->DeleteLocalRef(env, array);
  return result;
}

static int port_prog(void* context, uint32_t block, uint32_t offset, const uint8_t* data,
                     uint32_t size) {
  const native_client* c = context;
  JNIEnv* env = c->env;
  if (size > INT32_MAX) return -1;
  jbyteArray array = (*env)->NewByteArray(env, (jsize)size);
  if (array == NULL) return upcall_result(env, -1);
  (*env)->SetByteArrayRegion(env, array, 0, (jsize)size, (const jbyte*)data);
  const int result = upcall_result(
      env, (*env)->CallIntMethod(env, c->port, m_prog, (jint)block, (jint)offset, array));
  (*env)->DeleteLocalRef(env, array);
  return result;
}

static int port_erase(void* context, uint32_t block) {
  const native_client* c = context;
  return upcall_result(c->env, (*c->env)->CallIntMethod(c->env, c->port, m_erase, (jint)block));
}

static int port_sync(void* context) {
  const native_client* c = context;
  return upcall_result(c->env, (*c->env)->CallIntMethod(c->env, c->port, m_sync));
}

/* now and counter_read: the Java method returns the value, negative on failure. */
static int long_upcall(const native_client* c, jmethodID method, uint64_t* value) {
  const jlong result = (*c->env)->CallLongMethod(c->env, c->port, method);
  if (upcall_result(c->env, result < 0 ? -1 : 0) != 0) return -1;
  *value = (uint64_t)result;
  return 0;
}

static int port_now(void* context, uint64_t* seconds) {
  return long_upcall(context, m_now, seconds);
}

static int port_counter_read(void* context, uint64_t* value) {
  return long_upcall(context, m_counter_read, value);
}

static int port_counter_advance(void* context, uint64_t value) {
  const native_client* c = context;
  if (value > INT64_MAX) return -1; /* beyond a Java long: fail closed */
  return upcall_result(c->env,
                       (*c->env)->CallIntMethod(c->env, c->port, m_counter_advance, (jlong)value));
}

/* ---- Helpers ---- */

/* The client of a handle, with the JNIEnv its port's upcalls will use. */
static native_client* client_of(JNIEnv* env, jlong handle) {
  native_client* c = (native_client*)(intptr_t)handle;
  c->env = env;
  return c;
}

static void release(JNIEnv* env, native_client* c) {
  if (c->port != NULL) (*env)->DeleteGlobalRef(env, c->port);
  free(c);
}

/* ---- org.blur.Native ---- */

JNIEXPORT jint JNICALL Java_org_blur_Native_sdkVersion(JNIEnv* env, jclass cls) {
  (void)env;
  (void)cls;
  return (jint)blur_sdk_version();
}

JNIEXPORT jstring JNICALL Java_org_blur_Native_statusName(JNIEnv* env, jclass cls, jint status) {
  (void)cls;
  return (*env)->NewStringUTF(env, blur_status_name((blur_status)status));
}

/* partitions: NULL (blur_open) or {ledger first, ledger count, queue first,
 * queue count} (blur_open_partitioned). handle_out[0] gets the handle after
 * BLUR_OK and BLUR_NOT_PROVISIONED; other statuses free everything. */
JNIEXPORT jint JNICALL Java_org_blur_Native_open(JNIEnv* env, jclass cls, jobject port,
                                                 jint block_size, jint block_count,
                                                 jint prog_size, jboolean erased_zero,
                                                 jboolean clock, jboolean counter,
                                                 jintArray partitions, jlongArray handle_out) {
  (void)cls;
  jint layout[4] = {0, 0, 0, 0};
  if (partitions != NULL) {
    if ((*env)->GetArrayLength(env, partitions) != 4) return BLUR_INVALID_ARGUMENT;
    (*env)->GetIntArrayRegion(env, partitions, 0, 4, layout);
  }
  native_client* c = malloc(sizeof *c);
  if (c == NULL) {
    jclass oom = (*env)->FindClass(env, "java/lang/OutOfMemoryError");
    if (oom != NULL) (*env)->ThrowNew(env, oom, "blur_jni: no memory for a client");
    return BLUR_INVALID_ARGUMENT;
  }
  c->client = NULL;
  c->env = env;
  c->port = (*env)->NewGlobalRef(env, port);
  if (c->port == NULL) {
    release(env, c);
    return BLUR_INVALID_ARGUMENT;
  }
  const blur_port c_port = {.context = c,
                            .entropy = port_entropy,
                            .read = port_read,
                            .prog = port_prog,
                            .erase = port_erase,
                            .sync = port_sync,
                            .now = clock ? port_now : NULL,
                            .block_size = (uint32_t)block_size,
                            .block_count = (uint32_t)block_count,
                            .counter_read = counter ? port_counter_read : NULL,
                            .counter_advance = counter ? port_counter_advance : NULL,
                            .prog_size = (uint32_t)prog_size,
                            .erased_zero = erased_zero ? 1u : 0u};
  blur_status status;
  if (partitions == NULL) {
    status = blur_open(c->memory, sizeof c->memory, &c_port, &c->client);
  } else {
    const blur_partition ledger = {(uint32_t)layout[0], (uint32_t)layout[1]};
    const blur_partition queue = {(uint32_t)layout[2], (uint32_t)layout[3]};
    status = blur_open_partitioned(c->memory, sizeof c->memory, &c_port, &ledger, &queue,
                                   &c->client);
  }
  if (status != BLUR_OK && status != BLUR_NOT_PROVISIONED) {
    release(env, c);
    return status;
  }
  const jlong handle = (jlong)(intptr_t)c;
  (*env)->SetLongArrayRegion(env, handle_out, 0, 1, &handle);
  return status;
}

JNIEXPORT void JNICALL Java_org_blur_Native_close(JNIEnv* env, jclass cls, jlong handle) {
  (void)cls;
  release(env, (native_client*)(intptr_t)handle);
}

JNIEXPORT jint JNICALL Java_org_blur_Native_provision(JNIEnv* env, jclass cls, jlong handle,
                                                      jlong lifetime_cap_micros,
                                                      jlong window_seconds,
                                                      jlong window_allowance_micros,
                                                      jintArray cap_ids, jlongArray cap_micros) {
  (void)cls;
  native_client* c = client_of(env, handle);
  const jsize count = (*env)->GetArrayLength(env, cap_ids);
  if (count != (*env)->GetArrayLength(env, cap_micros) || count > BLUR_LEDGER_MAX_METRICS) {
    return BLUR_INVALID_ARGUMENT;
  }
  jint ids[BLUR_LEDGER_MAX_METRICS];
  jlong caps[BLUR_LEDGER_MAX_METRICS];
  (*env)->GetIntArrayRegion(env, cap_ids, 0, count, ids);
  (*env)->GetLongArrayRegion(env, cap_micros, 0, count, caps);
  blur_policy policy;
  memset(&policy, 0, sizeof policy);
  policy.lifetime_cap_micros = (uint64_t)lifetime_cap_micros;
  policy.window_seconds = (uint64_t)window_seconds;
  policy.window_allowance_micros = (uint64_t)window_allowance_micros;
  for (jsize i = 0; i < count; ++i) {
    policy.metric_caps[i].metric_id = (uint32_t)ids[i];
    policy.metric_caps[i].cap_micros = (uint64_t)caps[i];
  }
  policy.metric_cap_count = (uint32_t)count;
  return blur_provision(c->client, &policy);
}

JNIEXPORT jint JNICALL Java_org_blur_Native_addMetric(JNIEnv* env, jclass cls, jlong handle,
                                                      jint metric_id, jint mechanism,
                                                      jint epsilon_micros, jint domain_size,
                                                      jint longitudinal_epsilon_micros,
                                                      jint rounding_buckets) {
  (void)cls;
  native_client* c = client_of(env, handle);
  const blur_metric metric = {(uint32_t)metric_id,      (uint32_t)mechanism,
                              (uint32_t)epsilon_micros, (uint32_t)domain_size,
                              (uint32_t)longitudinal_epsilon_micros, (uint32_t)rounding_buckets};
  return blur_add_metric(c->client, &metric);
}

JNIEXPORT jint JNICALL Java_org_blur_Native_record(JNIEnv* env, jclass cls, jlong handle,
                                                   jint metric_id, jint value) {
  (void)cls;
  native_client* c = client_of(env, handle);
  return blur_record(c->client, (uint32_t)metric_id, (uint32_t)value);
}

/* The word's bytes as Java's modified UTF-8: the SDK refuses any byte
 * outside [a-z'], so nothing else needs converting. */
JNIEXPORT jint JNICALL Java_org_blur_Native_recordWord(JNIEnv* env, jclass cls, jlong handle,
                                                       jint metric_id, jstring word) {
  (void)cls;
  native_client* c = client_of(env, handle);
  if (word == NULL) return BLUR_INVALID_ARGUMENT;
  const char* bytes = (*env)->GetStringUTFChars(env, word, NULL);
  if (bytes == NULL) return BLUR_INVALID_ARGUMENT; /* OutOfMemoryError pending */
  const jsize length = (*env)->GetStringUTFLength(env, word);
  const blur_status status = blur_record_word(c->client, (uint32_t)metric_id, bytes, (size_t)length);
  (*env)->ReleaseStringUTFChars(env, word, bytes);
  return status;
}

/* results[0..2] = {status, report count, ack token}; the batch's bytes, or
 * NULL when the status is not BLUR_OK. */
JNIEXPORT jbyteArray JNICALL Java_org_blur_Native_pendingBatch(JNIEnv* env, jclass cls,
                                                               jlong handle, jlongArray results) {
  (void)cls;
  native_client* c = client_of(env, handle);
  size_t written = 0, count = 0;
  uint64_t token = 0;
  const blur_status status =
      blur_pending_batch(c->client, c->batch, sizeof c->batch, &written, &count, &token);
  const jlong values[3] = {status, (jlong)count, (jlong)token};
  (*env)->SetLongArrayRegion(env, results, 0, 3, values);
  if (status != BLUR_OK) return NULL;
  jbyteArray bytes = (*env)->NewByteArray(env, (jsize)written);
  if (bytes != NULL) (*env)->SetByteArrayRegion(env, bytes, 0, (jsize)written, (jbyte*)c->batch);
  return bytes; /* NULL with OutOfMemoryError pending */
}

JNIEXPORT jint JNICALL Java_org_blur_Native_acknowledge(JNIEnv* env, jclass cls, jlong handle,
                                                        jlong ack_token) {
  (void)cls;
  native_client* c = client_of(env, handle);
  return blur_acknowledge(c->client, (uint64_t)ack_token);
}

/* values[0..5]: blur_budget's fields in declaration order. */
JNIEXPORT jint JNICALL Java_org_blur_Native_budget(JNIEnv* env, jclass cls, jlong handle,
                                                   jlongArray values) {
  (void)cls;
  native_client* c = client_of(env, handle);
  blur_budget budget;
  const blur_status status = blur_get_budget(c->client, &budget);
  if (status != BLUR_OK) return status;
  const jlong out[6] = {(jlong)budget.lifetime_cap_micros, (jlong)budget.spent_micros,
                        (jlong)budget.remaining_micros,    (jlong)budget.window_start,
                        (jlong)budget.window_spent_micros, (jlong)budget.pending_reports};
  (*env)->SetLongArrayRegion(env, values, 0, 6, out);
  return status;
}

JNIEXPORT jint JNICALL Java_org_blur_Native_deviceNonce(JNIEnv* env, jclass cls, jlong handle,
                                                        jlongArray nonce) {
  (void)cls;
  native_client* c = client_of(env, handle);
  uint64_t value = 0;
  const blur_status status = blur_device_nonce(c->client, &value);
  const jlong out = (jlong)value; /* the same 64 bits */
  if (status == BLUR_OK) (*env)->SetLongArrayRegion(env, nonce, 0, 1, &out);
  return status;
}

/* body gets the JSON text without its NUL (BLUR_ENROLLMENT_BODY_SIZE - 1 bytes). */
JNIEXPORT jint JNICALL Java_org_blur_Native_enrollmentBody(JNIEnv* env, jclass cls, jlong handle,
                                                           jbyteArray body) {
  (void)cls;
  native_client* c = client_of(env, handle);
  char text[BLUR_ENROLLMENT_BODY_SIZE];
  if ((*env)->GetArrayLength(env, body) != BLUR_ENROLLMENT_BODY_SIZE - 1) {
    return BLUR_INVALID_ARGUMENT;
  }
  const blur_status status = blur_enrollment_body(c->client, text, sizeof text);
  if (status == BLUR_OK) {
    (*env)->SetByteArrayRegion(env, body, 0, BLUR_ENROLLMENT_BODY_SIZE - 1, (const jbyte*)text);
  }
  return status;
}

/* status[0]: the status; the body's bytes (without the NUL), or NULL unless OK. */
JNIEXPORT jbyteArray JNICALL Java_org_blur_Native_enrollmentBodyWithToken(JNIEnv* env, jclass cls,
                                                                         jlong handle,
                                                                         jstring token,
                                                                         jintArray status_out) {
  (void)cls;
  native_client* c = client_of(env, handle);
  jint status = BLUR_INVALID_ARGUMENT;
  char text[BLUR_ENROLLMENT_BODY_WITH_TOKEN_SIZE];
  if (token != NULL) {
    const char* chars = (*env)->GetStringUTFChars(env, token, NULL);
    if (chars == NULL) return NULL; /* OutOfMemoryError pending */
    status = blur_enrollment_body_with_token(c->client, chars, text, sizeof text);
    (*env)->ReleaseStringUTFChars(env, token, chars);
  }
  (*env)->SetIntArrayRegion(env, status_out, 0, 1, &status);
  if (status != BLUR_OK) return NULL;
  const jsize length = (jsize)strlen(text);
  jbyteArray bytes = (*env)->NewByteArray(env, length);
  if (bytes != NULL) (*env)->SetByteArrayRegion(env, bytes, 0, length, (const jbyte*)text);
  return bytes; /* NULL with OutOfMemoryError pending */
}

/* ---- Loading ---- */

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM* vm, void* reserved) {
  (void)reserved;
  JNIEnv* env = NULL;
  if ((*vm)->GetEnv(vm, (void**)&env, JNI_VERSION_1_6) != JNI_OK) return JNI_ERR;
  jclass local = (*env)->FindClass(env, "org/blur/PortAdapter");
  if (local == NULL) return JNI_ERR;
  adapter_class = (*env)->NewGlobalRef(env, local);
  (*env)->DeleteLocalRef(env, local);
  if (adapter_class == NULL) return JNI_ERR;
  const struct {
    jmethodID* id;
    const char* name;
    const char* signature;
  } methods[] = {{&m_entropy, "entropy", "([B)I"},
                 {&m_read, "read", "(II[B)I"},
                 {&m_prog, "prog", "(II[B)I"},
                 {&m_erase, "erase", "(I)I"},
                 {&m_sync, "sync", "()I"},
                 {&m_now, "now", "()J"},
                 {&m_counter_read, "counterRead", "()J"},
                 {&m_counter_advance, "counterAdvance", "(J)I"}};
  for (size_t i = 0; i < sizeof methods / sizeof methods[0]; ++i) {
    *methods[i].id =
        (*env)->GetMethodID(env, adapter_class, methods[i].name, methods[i].signature);
    if (*methods[i].id == NULL) return JNI_ERR; /* NoSuchMethodError pending */
  }
  return JNI_VERSION_1_6;
}

JNIEXPORT void JNICALL JNI_OnUnload(JavaVM* vm, void* reserved) {
  (void)reserved;
  JNIEnv* env = NULL;
  if ((*vm)->GetEnv(vm, (void**)&env, JNI_VERSION_1_6) == JNI_OK && adapter_class != NULL) {
    (*env)->DeleteGlobalRef(env, adapter_class);
    adapter_class = NULL;
  }
}
