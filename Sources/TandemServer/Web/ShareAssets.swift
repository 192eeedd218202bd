/// The share page's only stylesheet and script, embedded in the binary and served from
/// `/share/share.css` and `/share/share.js` under the page's CSP (no inline code; decisions C12).
enum ShareAssets {
    /// Readable from a 320-pixel phone up; visible keyboard focus; no web fonts.
    static let stylesheet = """
        *{box-sizing:border-box}
        body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d1d1f;background:#fff;line-height:1.45}
        header{display:flex;flex-wrap:wrap;align-items:center;justify-content:flex-end;gap:.25rem 1rem;padding:.5rem 1rem;background:#f5f5f7;font-size:.9rem}
        header p{margin:0;overflow-wrap:anywhere}
        main{max-width:44rem;margin:0 auto;padding:1rem 1rem 3rem}
        h1{font-size:1.7rem;margin:1.5rem 0 .25rem;overflow-wrap:anywhere}
        h2{font-size:1.2rem;margin:2rem 0 .5rem}
        .thumb{display:block;max-width:100%;margin:1rem 0;border-radius:12px}
        a{color:#0058b0}
        a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible{outline:3px solid #ff9f0a;outline-offset:2px}
        form{margin:.5rem 0 1rem}
        form.inline{display:inline-flex;flex-wrap:wrap;align-items:center;gap:.25rem;margin:.15rem .25rem .15rem 0}
        label{display:block;font-weight:600;margin:.75rem 0 .25rem}
        label.check{font-weight:400;display:flex;gap:.5rem;align-items:flex-start}
        label.check input{width:auto;margin-top:.3rem}
        .visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
        input,select{font:inherit;width:100%;padding:.5rem;border:1px solid #86868b;border-radius:6px;background:#fff}
        form.inline select{width:auto;padding:.25rem}
        .copy{display:flex;gap:.5rem}
        .copy input{flex:1;min-width:0}
        button,a.button{font:inherit;display:inline-block;padding:.5rem 1.1rem;border-radius:8px;border:1px solid #0058b0;background:#0071e3;color:#fff;cursor:pointer;margin-top:.75rem;text-decoration:none}
        form.inline button,.copy button{margin-top:0;padding:.3rem .8rem}
        header form{margin:0}
        header button{margin:0;padding:.2rem .7rem;background:transparent;color:#0058b0}
        button.secondary{background:#fff;color:#0058b0}
        button.danger{background:#b3261e;border-color:#8c1d18}
        .actions{display:flex;flex-wrap:wrap;gap:0 .75rem}
        .hint{display:block;color:#515154;font-size:.9rem;margin:.25rem 0}
        .field-error{display:block;color:#b3261e;font-weight:600;margin:.25rem 0}
        .notice{background:#e3f2e1;border:1px solid #7bb274;padding:.5rem 1rem;border-radius:6px}
        .scroll{overflow-x:auto;max-width:100%}
        table{border-collapse:collapse;width:100%}
        th,td{border-bottom:1px solid #d2d2d7;padding:.4rem .5rem;text-align:left;vertical-align:top}
        td .hint{overflow-wrap:anywhere}
        #requesters{padding-left:1.2rem}
        @media (max-width:36rem){
          thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
          table,tbody,tr,td{display:block;width:100%}
          tr{border-bottom:1px solid #d2d2d7;padding:.5rem 0}
          td{border:0;padding:.15rem 0}
          td[data-label]::before{content:attr(data-label) ": ";font-weight:600}
        }
        """

    /// "Copy link": shown only when the script runs (the field stays selectable without it);
    /// says what happened in `#copy-status` (a live region). A page restored from the back/forward
    /// cache is reloaded, so Back after "Sign out" does not show the signed-in page again (C30).
    static let script = """
        "use strict";
        window.addEventListener("pageshow", function (event) { if (event.persisted) location.reload(); });
        (function () {
          var button = document.getElementById("copy-link"), field = document.getElementById("share-link");
          var status = document.getElementById("copy-status");
          if (!button || !field) return;
          button.hidden = false;
          function said(text) { status.textContent = text; }
          button.addEventListener("click", function () {
            field.focus();
            field.select();
            var fallback = function () {
              try { said(document.execCommand("copy") ? "Link copied." : "Press Ctrl+C (⌘C) to copy the selected link."); }
              catch (e) { said("Press Ctrl+C (⌘C) to copy the selected link."); }
            };
            if (navigator.clipboard && navigator.clipboard.writeText) {
              navigator.clipboard.writeText(field.value).then(function () { said("Link copied."); }, fallback);
            } else {
              fallback();
            }
          });
        })();
        """
}
