/// The passkey parts of the sign-in pages: a "Sign in with a passkey" form on the sign-in page
/// and a "Sign up with a passkey" form (email and name) on the sign-up page. Both are hidden
/// until the script finds WebAuthn in the browser. The script (appended to
/// `/signin/signin.js`) asks `/signin/passkey/options` for a challenge, runs the browser's
/// ceremony, fills the form's hidden fields with the answer (base64url) and submits it, so the
/// flow ends as the password's does (consent, then `{ckSession}` or the callback).
enum PasskeyHTML {
    static func signIn(csrf: String, app: SignInApp) -> String {
        """
        <form method="post" action="/signin/passkey" id="passkey-signin" hidden>
        \(SignInHTML.hidden("csrf", csrf))\(app.field)\(answerFields(["credentialID", "clientDataJSON", "authenticatorData", "signature", "userHandle"]))
        <p class="error passkey-error" id="passkey-error" role="alert" hidden></p>
        <button type="submit" id="passkey-signin-button">Sign in with a passkey</button>
        </form>
        """
    }

    static func signUp(csrf: String, app: SignInApp) -> String {
        """
        <form method="post" action="/signin/passkey/signup" id="passkey-signup" hidden>
        <h2>Or sign up with a passkey</h2>
        \(SignInHTML.hidden("csrf", csrf))\(app.field)\(answerFields(["clientDataJSON", "attestationObject"]))
        <p class="error passkey-error" id="passkey-error" role="alert" hidden></p>
        <label>Name <input type="text" name="name" id="passkey-name" autocomplete="name" maxlength="200"></label>
        <label>Email <input type="email" name="email" id="passkey-email" autocomplete="username" required></label>
        <button type="submit" id="passkey-signup-button">Sign up with a passkey</button>
        </form>
        """
    }

    private static func answerFields(_ names: [String]) -> String {
        names.map { "<input type=\"hidden\" name=\"\($0)\" value=\"\">" }.joined()
    }

    /// Appended to `/signin/signin.js`.
    static let script = """
        (function () {
          function buffer(text) {
            var b64 = text.replace(/-/g, "+").replace(/_/g, "/");
            while (b64.length % 4) b64 += "=";
            var raw = atob(b64), out = new Uint8Array(raw.length);
            for (var i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
            return out.buffer;
          }
          function text(bytes) {
            if (!bytes) return "";
            var view = new Uint8Array(bytes), raw = "";
            for (var i = 0; i < view.length; i++) raw += String.fromCharCode(view[i]);
            return btoa(raw).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "");
          }
          function options(form, purpose, extra) {
            var body = new URLSearchParams();
            body.set("csrf", form.elements.csrf.value);
            ["ckAPIToken", "return"].forEach(function (name) { if (form.elements[name]) body.set(name, form.elements[name].value); });
            body.set("purpose", purpose);
            Object.keys(extra).forEach(function (key) { body.set(key, extra[key]); });
            return fetch("/signin/passkey/options", { method: "POST", body: body, credentials: "same-origin" }).then(function (response) {
              return response.json().then(function (json) {
                if (!response.ok) throw new Error(json.reason || "The server refused the passkey request.");
                return json;
              });
            });
          }
          function fail(form, error) {
            var message = form.querySelector(".passkey-error");
            message.textContent = (error && error.message) || String(error);
            message.hidden = false;
          }
          function signIn(form) {
            options(form, "get", {}).then(function (o) {
              return navigator.credentials.get({ publicKey: { challenge: buffer(o.challenge), rpId: o.rpId, timeout: o.timeout,
                userVerification: o.userVerification, allowCredentials: [] } });
            }).then(function (credential) {
              if (!credential) throw new Error("No passkey was chosen.");
              var f = form.elements;
              f.credentialID.value = text(credential.rawId);
              f.clientDataJSON.value = text(credential.response.clientDataJSON);
              f.authenticatorData.value = text(credential.response.authenticatorData);
              f.signature.value = text(credential.response.signature);
              f.userHandle.value = text(credential.response.userHandle);
              form.submit();
            }).catch(function (error) { fail(form, error); });
          }
          function signUp(form) {
            options(form, "create", { email: form.elements.email.value, name: form.elements.name.value }).then(function (o) {
              return navigator.credentials.create({ publicKey: { challenge: buffer(o.challenge), rp: o.rp,
                user: { id: buffer(o.user.id), name: o.user.name, displayName: o.user.displayName },
                pubKeyCredParams: o.pubKeyCredParams, timeout: o.timeout, attestation: o.attestation,
                authenticatorSelection: o.authenticatorSelection } });
            }).then(function (credential) {
              if (!credential) throw new Error("No passkey was made.");
              form.elements.clientDataJSON.value = text(credential.response.clientDataJSON);
              form.elements.attestationObject.value = text(credential.response.attestationObject);
              form.submit();
            }).catch(function (error) { fail(form, error); });
          }
          document.addEventListener("DOMContentLoaded", function () {
            if (!window.PublicKeyCredential || !navigator.credentials) return;
            [["passkey-signin", signIn], ["passkey-signup", signUp]].forEach(function (pair) {
              var form = document.getElementById(pair[0]);
              if (!form) return;
              form.hidden = false;
              form.addEventListener("submit", function (event) { event.preventDefault(); pair[1](form); });
            });
          });
        })();

        """
}
