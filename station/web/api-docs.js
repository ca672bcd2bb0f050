// The interactive API documentation (/api/docs): Swagger UI, served by the station itself
// (no CDN: a casino network has no internet) under the dashboard's Content-Security-Policy,
// which allows no inline script, hence this file.
window.ui = SwaggerUIBundle({
  url: "/api/openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  persistAuthorization: false,
});
