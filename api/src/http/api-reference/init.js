// Starts Swagger UI on the reference page. A file of its own, not an inline script: the page's
// Content-Security-Policy allows scripts from this service only.
window.ui = SwaggerUIBundle({
  url: new URL("json", document.baseURI).href,
  dom_id: "#swagger-ui",
  deepLinking: true,
  tryItOutEnabled: false,
});
