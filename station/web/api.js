// The station's HTTP API with the bearer token, which lives in sessionStorage only
// (gone when the browser tab closes).

const KEY = "station-token";

export const token = {
  get: () => sessionStorage.getItem(KEY),
  set: (t) => sessionStorage.setItem(KEY, t),
  clear: () => sessionStorage.removeItem(KEY),
};

export class ApiError extends Error {
  constructor(status, detail) {
    super(detail);
    this.status = status;
  }
}

/** fetch with the token; the parsed JSON, or an ApiError with the station's words. */
export async function api(path, options = {}) {
  const headers = { ...(options.headers || {}) };
  const t = token.get();
  if (t) headers.Authorization = `Bearer ${t}`;
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(path, { ...options, headers });
  } catch (err) {
    throw new ApiError(0, `the station did not answer (${err.message})`);
  }
  if (!response.ok) {
    let detail = response.statusText;
    try {
      const body = await response.json();
      detail = typeof body.detail === "string" ? body.detail : JSON.stringify(body.detail);
    } catch { /* not JSON: keep the status text */ }
    throw new ApiError(response.status, detail);
  }
  return options.raw ? response : response.json();
}

/** Send one table event; answers its verdict. */
export function post(event) {
  return api("/api/events", { method: "POST", body: JSON.stringify(event) });
}
