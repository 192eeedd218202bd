/// The console's only stylesheet and script, embedded in the binary and served from
/// `/console/console.css` and `/console/console.js` (no CDN, no npm; decisions C4).
enum ConsoleAssets {
    /// Readable from a 320-pixel phone up; visible keyboard focus; no web fonts.
    static let stylesheet = """
        *{box-sizing:border-box}
        body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d1d1f;background:#f5f5f7;line-height:1.45}
        header{background:#1d1d1f;color:#fff;padding:.5rem 1rem;display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1.5rem}
        header a{color:#fff}
        .brand{margin:0;font-weight:600}
        .brand a{text-decoration:none}
        nav{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1rem}
        nav ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:.25rem 1rem}
        nav a[aria-current=page]{font-weight:700;text-decoration-thickness:2px}
        main{max-width:68rem;margin:0 auto;padding:1rem}
        h1{font-size:1.6rem;margin:.5rem 0 1rem;overflow-wrap:anywhere}
        h2{font-size:1.25rem;margin-top:2rem}
        a{color:#0058b0}
        a:focus-visible,button:focus-visible,input:focus-visible{outline:3px solid #ff9f0a;outline-offset:2px}
        form{margin:.5rem 0 1rem;max-width:40rem}
        form.inline{display:inline;margin:0}
        form.filters{max-width:none;display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:flex-end}
        form.filters label{margin:0}
        label{display:block;font-weight:600;margin:.75rem 0 .25rem}
        input,textarea{font:inherit;width:100%;padding:.5rem;border:1px solid #86868b;border-radius:6px;background:#fff}
        textarea{font-family:ui-monospace,Menlo,monospace;font-size:.9rem}
        textarea:focus-visible{outline:3px solid #ff9f0a;outline-offset:2px}
        label.check{font-weight:400}
        label.check input{width:auto;margin-right:.4rem}
        .grants{color:#515154}
        fieldset.indexes label.check{display:inline-block;margin:.25rem 1rem .25rem 0}
        details{margin:.5rem 0 1rem}
        summary{cursor:pointer;font-weight:600}
        summary:focus-visible{outline:3px solid #ff9f0a;outline-offset:2px}
        ul.types{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.25rem 1rem}
        section.record-type{border-top:1px solid #d2d2d7;margin-top:1.5rem}
        form.filters input{width:14rem}
        button{font:inherit;padding:.45rem 1rem;border-radius:6px;border:1px solid #0058b0;background:#0071e3;color:#fff;cursor:pointer;margin-top:.75rem}
        form.inline button,header button{margin-top:0;padding:.25rem .7rem}
        header button{background:transparent;border-color:#fff}
        button.danger{background:#b3261e;border-color:#8c1d18}
        a.danger{color:#b3261e}
        .hint{display:block;color:#515154;font-size:.9rem;margin:.25rem 0}
        .field-error,.error{color:#b3261e;font-weight:600}
        .field-error{display:block;margin:.25rem 0}
        .notice,.created{background:#e3f2e1;border:1px solid #7bb274;padding:.5rem 1rem;border-radius:6px}
        .created{background:#fff8e1;border-color:#d4a017}
        code{font-family:ui-monospace,Menlo,monospace;font-size:.9em}
        code.wrap{overflow-wrap:anywhere;word-break:break-all}
        .scroll{overflow-x:auto;-webkit-overflow-scrolling:touch;max-width:100%}
        table{border-collapse:collapse;width:100%;min-width:40rem;background:#fff;margin:.5rem 0 1rem}
        caption{text-align:left;font-weight:600;padding:.25rem 0}
        th,td{border-bottom:1px solid #d2d2d7;padding:.4rem .5rem;text-align:left;vertical-align:top}
        td button{white-space:nowrap}
        #log td:nth-child(3){overflow-wrap:anywhere}
        tr.status-4xx td:nth-child(4){color:#8a5a00;font-weight:600}
        tr.status-5xx td:nth-child(4){color:#b3261e;font-weight:700}
        dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}
        dt{font-weight:600}
        dd{margin:0;overflow-wrap:anywhere}
        .charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(18rem,1fr));gap:1rem}
        figure.chart{margin:0;background:#fff;border:1px solid #d2d2d7;border-radius:8px;padding:.5rem}
        figure.chart svg{width:100%;height:10rem;display:block}
        .axis{stroke:#86868b;stroke-width:1}
        .grid{stroke:#d2d2d7;stroke-dasharray:3 3}
        .max{font-size:9px;fill:#515154}
        .line{fill:none;stroke-width:1.8;vector-effect:non-scaling-stroke}
        .line-0{stroke:#0071e3}
        .line-1{stroke:#d70015}
        .key{display:inline-block;font-size:.85rem;margin-left:.5rem}
        .key::before{content:"";display:inline-block;width:.8rem;height:.2rem;margin-right:.25rem;vertical-align:middle}
        .key-0::before{background:#0071e3}
        .key-1::before{background:#d70015}
        .summary{margin:.25rem 0 0;font-size:.9rem}
        form.wide,#edit-record{max-width:none}
        fieldset.row{display:grid;grid-template-columns:repeat(auto-fit,minmax(11rem,1fr));gap:0 1rem}
        fieldset{border:1px solid #d2d2d7;border-radius:8px;margin:.75rem 0;padding:.25rem 1rem .75rem;background:#fff}
        legend{font-weight:600;padding:0 .25rem}
        select{font:inherit;width:100%;padding:.45rem;border:1px solid #86868b;border-radius:6px;background:#fff}
        select:focus-visible{outline:3px solid #ff9f0a;outline-offset:2px}
        .field-name{margin:.5rem 0 0}
        img.asset-preview{display:block;max-width:12rem;max-height:8rem;margin:.25rem 0}
        .paging a{display:inline-block;padding:.5rem 0}
        @media (max-width:40rem){
          main{padding:.75rem}
          dl{grid-template-columns:1fr}
          dd{margin-bottom:.5rem}
          form.filters input{width:100%}
          form.filters label,form.filters button{width:100%}
        }
        """

    /// Polls the log and chart endpoints every 2 seconds while their page is open. New rows are
    /// built with `textContent` (never HTML from the server). A page the browser restores from
    /// its back/forward cache (shown without asking the server, `no-store` or not) is reloaded,
    /// so the Back button after signing out leads to the sign-in page, not the old page (C30).
    static let script = """
        "use strict";
        window.addEventListener("pageshow", function (event) { if (event.persisted) location.reload(); });
        (function () {
          function get(url, done) {
            fetch(url, { credentials: "same-origin", headers: { "accept": "application/json" } })
              .then(function (r) { return r.ok ? r.json() : null; })
              .then(function (body) { if (body) done(body); })
              .catch(function () {});
          }
          var rows = document.getElementById("log-rows");
          if (rows) {
            var poll = function () {
              var query = "after=" + encodeURIComponent(rows.dataset.after) + "&status=" + encodeURIComponent(rows.dataset.status) +
                "&path=" + encodeURIComponent(rows.dataset.path) + "&id=" + encodeURIComponent(rows.dataset.id || "");
              get("/console/logs.json?" + query, function (body) {
                var entries = body.entries || [];
                for (var i = entries.length - 1; i >= 0; i--) {
                  var e = entries[i], tr = document.createElement("tr");
                  tr.className = "status-" + Math.floor(e.status / 100) + "xx";
                  [e.time, e.method, e.path, String(e.status), e.latency, e.uuid].forEach(function (text) {
                    var td = document.createElement("td");
                    td.textContent = text;
                    tr.appendChild(td);
                  });
                  rows.insertBefore(tr, rows.firstChild);
                }
                while (rows.children.length > 1000) rows.removeChild(rows.lastChild);
                rows.dataset.after = String(body.after);
              });
            };
            setInterval(poll, 2000);
          }
          var charts = document.getElementById("charts");
          if (charts) {
            var draw = function () {
              get("/console/metrics.json", function (body) {
                Object.keys(body.charts || {}).forEach(function (id) {
                  var chart = body.charts[id];
                  var max = document.getElementById(id + "-max");
                  if (max) max.textContent = chart.max;
                  var summary = document.getElementById(id + "-summary");
                  if (summary) summary.textContent = chart.summary;
                  Object.keys(chart.points || {}).forEach(function (name) {
                    var line = document.getElementById(id + "-" + name);
                    if (line) line.setAttribute("points", chart.points[name]);
                  });
                });
                charts.dataset.updated = String(Date.now());
              });
            };
            setInterval(draw, 2000);
          }
        })();
        """
}
