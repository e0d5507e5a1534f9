// The collector's JSON API as the dashboard calls it, with the reader token.
//
// The token is entered once (or passed as #token=... in the address, which
// is then removed from the address bar) and kept in sessionStorage, so it
// lives as long as the tab and is sent on every call as
// "Authorization: Bearer <token>". The fragment never reaches a server.
"use strict";

const BlurApi = (() => {
  const tokenKey = "blur.readerToken";

  // A 401 or 403: the collector wants a (different) reader token.
  class AuthError extends Error {}

  function fragmentParams() {
    return new URLSearchParams(window.location.hash.replace(/^#/, ""));
  }

  function setFragmentParams(params) {
    const text = params.toString();
    const url = window.location.pathname + window.location.search + (text ? "#" + text : "");
    window.history.replaceState(null, "", url);
  }

  // Moves #token=... into sessionStorage and out of the address bar.
  function adoptFragmentToken() {
    const params = fragmentParams();
    if (!params.has("token")) return;
    setToken(params.get("token"));
    params.delete("token");
    setFragmentParams(params);
  }

  function token() {
    return window.sessionStorage.getItem(tokenKey) || "";
  }

  function setToken(value) {
    if (value) window.sessionStorage.setItem(tokenKey, value);
    else window.sessionStorage.removeItem(tokenKey);
  }

  // GET path (relative to this collector) -> parsed JSON; throws AuthError on
  // 401/403 and Error with the server's {"error"} text otherwise.
  async function getJson(path) {
    const headers = { Accept: "application/json" };
    if (token()) headers.Authorization = "Bearer " + token();
    const response = await fetch(path, { headers, cache: "no-store" });
    let body = null;
    try {
      body = await response.json();
    } catch (_) {
      body = null;
    }
    if (response.status === 401 || response.status === 403) {
      throw new AuthError((body && body.error) || "HTTP " + response.status);
    }
    if (!response.ok) {
      throw new Error((body && body.error) || "HTTP " + response.status + " for " + path);
    }
    if (body === null) throw new Error("not JSON: " + path);
    return body;
  }

  function query(params) {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) {
      if (value !== undefined && value !== null && value !== "") search.set(key, value);
    }
    const text = search.toString();
    return text ? "?" + text : "";
  }

  const id = (metricId) => encodeURIComponent(String(metricId));

  return {
    AuthError,
    fragmentParams,
    setFragmentParams,
    adoptFragmentToken,
    token,
    setToken,
    metrics: () => getJson("/v1/metrics"),
    estimate: (metricId, postprocess) =>
      getJson("/v1/metrics/" + id(metricId) + "/estimate" + query({ postprocess })),
    // values: the one value to chart (frequency metrics; null: every value).
    series: (metricId, bucket, values) =>
      getJson("/v1/metrics/" + id(metricId) + "/series" + query({ bucket, values })),
  };
})();
