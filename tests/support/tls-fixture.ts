/**
 * A self-signed certificate for the TLS fixture sites (secure.test, www.secure.test; valid ten
 * years from 2026-11-26; made with `openssl req -x509 -newkey ec -pkeyopt
 * ec_paramgen_curve:prime256v1 -nodes -days 3650 -subj /CN=secure.test -addext
 * subjectAltName=DNS:secure.test,DNS:www.secure.test`). Test data only: the key protects nothing.
 */
export const FIXTURE_TLS = {
  hosts: ["secure.test", "www.secure.test"],
  key: `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgxQMG32qcnttvrBzb
3793rPZJcbmUmHH/CoaJRPW546ahRANCAAQ0h7ii/1QZql2VL6LiimsRsSaad/Ik
XwJ7Df0c6KCDSuOX1fLHXtUnx7Pj9ZDfogQZYQbBdn17BUP6aXrl9/vG
-----END PRIVATE KEY-----
`,
  cert: `-----BEGIN CERTIFICATE-----
MIIBqzCCAVCgAwIBAgIUR44z6a2mhA0kcYVVhfc/QefgsVcwCgYIKoZIzj0EAwIw
FjEUMBIGA1UEAwwLc2VjdXJlLnRlc3QwHhcNMjYxMTI2MTQzNzQzWhcNMzYxMTIz
MTQzNzQzWjAWMRQwEgYDVQQDDAtzZWN1cmUudGVzdDBZMBMGByqGSM49AgEGCCqG
SM49AwEHA0IABDSHuKL/VBmqXZUvouKKaxGxJpp38iRfAnsN/RzooINK45fV8sde
1SfHs+P1kN+iBBlhBsF2fXsFQ/ppeuX3+8ajfDB6MB0GA1UdDgQWBBQCqRwgUXd4
FvvL0PnDrtQu8gH+wjAfBgNVHSMEGDAWgBQCqRwgUXd4FvvL0PnDrtQu8gH+wjAP
BgNVHRMBAf8EBTADAQH/MCcGA1UdEQQgMB6CC3NlY3VyZS50ZXN0gg93d3cuc2Vj
dXJlLnRlc3QwCgYIKoZIzj0EAwIDSQAwRgIhAOEu+KHVEhDtK2H26iRV9F5H7AQv
YbZdV6xA15vkzRElAiEAsoNcKxd3yTyTV6CAjZ2l+mH73Vl/ZaVZgzQLSuZeF0I=
-----END CERTIFICATE-----
`,
};
