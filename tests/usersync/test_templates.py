"""Sync URL templates (TV14, TV15) and the bidder registry built from definitions + host config."""

from __future__ import annotations

import pytest

from hbserver.bidders.registry import IFRAME, REDIRECT, RegistryError, build_registry
from hbserver.config import load_config
from hbserver.usersync.templates import TemplateError, build_sync_url, compile_template, escape_outside_macros

MACROS = {"GDPR": "A", "GDPRConsent": "B", "USPrivacy": "C", "GPP": "D", "GPPSID": "1"}
REDIRECT_TV14 = "{{.ExternalURL}}/setuid?bidder={{.SyncerKey}}&f={{.SyncType}}&gdpr={{.GDPR}}&gpp={{.GPP}}" \
    "&gpp_sid={{.GPPSID}}&uid={{.UserMacro}}"


@pytest.mark.parametrize(
    ("user_macro", "redirect", "expected"),
    [
        ("$UID$", REDIRECT_TV14,
         "https://bidder.com/sync?redirect=http%3A%2F%2Fsyncer.com%2Fsetuid%3Fbidder%3DanyKey%26f%3Dx%26gdpr%3DA"
         "%26gpp%3DD%26gpp_sid%3D1%26uid%3D%24UID%24"),
        ("{{UID}}", REDIRECT_TV14,
         "https://bidder.com/sync?redirect=http%3A%2F%2Fsyncer.com%2Fsetuid%3Fbidder%3DanyKey%26f%3Dx%26gdpr%3DA"
         "%26gpp%3DD%26gpp_sid%3D1%26uid%3D%7B%7BUID%7D%7D"),
        ("$UID$", "{{xExternalURL}}", "https://bidder.com/sync?redirect=%7B%7BxExternalURL%7D%7D"),
    ],
)
def test_build_template_vectors(user_macro, redirect, expected):
    template = build_sync_url(
        "https://bidder.com/sync?redirect={{.RedirectURL}}", redirect_template=redirect, bidder="anyKey",
        sync_type_letter="x", user_macro=user_macro, external_url="http://syncer.com",
    )
    assert template.render(MACROS) == expected


@pytest.mark.parametrize(
    ("text", "escaped"),
    [
        ("&a{{.Macro1}}/b{{.Macro2}}&c", "%26a{{.Macro1}}%2Fb{{.Macro2}}%26c"),
        (" &a {{ .Macro1  }} /b ", "+%26a+{{ .Macro1  }}+%2Fb+"),
        ("{{Macro}}", "%7B%7BMacro%7D%7D"),
    ],
)
def test_escape_template(text, escaped):
    assert escape_outside_macros(text) == escaped


def test_privacy_values_are_inserted_raw():
    template = compile_template("https://x.example/s?gpp={{.GPP}}&sid={{ .GPPSID }}")
    assert template.render({"GPP": "DBABMA~CP", "GPPSID": "2,6"}) == "https://x.example/s?gpp=DBABMA~CP&sid=2,6"
    assert template.render({}) == "https://x.example/s?gpp=&sid="


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("https://x.example/s?a={{.Nope}}", "unknown macro {{.Nope}}"),
        ("https://x.example/s?a={{UID}}", "'{{' that is not a macro"),
        ("x.example/s?r={{.RedirectURL}}", "does not give an http(s) URL"),
    ],
)
def test_bad_templates(url, problem):
    with pytest.raises(TemplateError) as caught:
        build_sync_url(url, redirect_template="{{.ExternalURL}}/setuid", bidder="b", sync_type_letter="i",
                       user_macro="", external_url="http://h")
    assert str(caught.value).startswith(problem)


def registry(**raw):
    return build_registry(load_config(environ={}, overrides=raw))


def test_tv15_appnexus_sync_url():
    appnexus = registry().lookup("appnexus")
    assert appnexus.sync_key == "adnxs" and appnexus.syncer.default_type == REDIRECT
    url = appnexus.syncer.templates[REDIRECT].render(
        {"GDPR": "1", "GDPRConsent": "CPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA"}
    )
    assert url == (
        "https://ib.adnxs.com/getuid?http%3A%2F%2Flocalhost%3A8000%2Fsetuid%3Fbidder%3Dappnexus%26gdpr%3D1"
        "%26gdpr_consent%3DCPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA%26gpp%3D%26gpp_sid%3D%26f%3Di%26uid%3D%24UID"
    )


def test_every_definition_file_is_named_after_its_code():
    from hbserver.bidders import BUILTIN_ADAPTERS, BUILTIN_ALIASES, BUILTIN_CODES
    from hbserver.bidders.registry import read_definitions

    definitions = read_definitions()
    assert set(definitions) == BUILTIN_CODES == BUILTIN_ADAPTERS | BUILTIN_ALIASES
    assert BUILTIN_ADAPTERS >= {"generic", "appnexus", "rubicon", "pubmatic", "ix", "openx", "triplelift"}
    assert BUILTIN_ALIASES == {code for code, data in definitions.items() if data.get("alias_of")}
    assert {"adform", "epsilon", "equativ", "magnite", "yahooAdvertising", "yahoossp"} <= BUILTIN_ALIASES


def test_lookup_is_case_insensitive_and_syncable_lists_enabled_syncers():
    reg = registry()
    assert reg.lookup("AppNexus").code == "appnexus"
    assert reg.lookup("nobody") is None
    # every enabled bidder with a sync URL of its own or of the adapter it is an alias of; not ix, rubicon
    # and magnite (disabled), nor teads and the yahooAds family (they sync only once the host sets a URL)
    syncable = {code for code, bidder in reg.bidders.items() if not bidder.disabled and bidder.sync_endpoints}
    syncable |= {code for code, bidder in reg.bidders.items() if not bidder.disabled and bidder.alias_of
                 and not bidder.sync_supports and reg.bidders[bidder.alias_of].sync_endpoints}
    assert set(reg.syncable) == syncable
    assert {"appnexus", "openx", "pubmatic", "triplelift", "adform", "epsilon", "equativ"} <= syncable
    assert not {"ix", "rubicon", "magnite", "teads", "yahooAds", "yahoossp", "generic"} & set(reg.syncable)


def test_host_overrides_only_what_it_writes():
    reg = registry(
        external_url="https://pbs.example",
        adapters={
            "appnexus": {"gvl_vendor_id": 99, "usersync": {"key": "anx", "support_cors": True}},
            "ix": {"disabled": False, "endpoint": "https://ix.example/bid"},
            "pubmatic": {"usersync": {"enabled": False, "iframe": {"url": "https://pm.example/i?r={{.RedirectURL}}",
                                                                   "user_macro": "PM"}}},
        },
    )
    appnexus, ix, pubmatic = reg.lookup("appnexus"), reg.lookup("ix"), reg.lookup("pubmatic")
    assert (appnexus.gvl_vendor_id, appnexus.sync_key, appnexus.syncer.support_cors) == (99, "anx", True)
    assert appnexus.openrtb_version == "2.5"  # not written: the definition's value
    assert (ix.disabled, ix.endpoint) == (False, "https://ix.example/bid")
    assert "ix" in reg.syncable
    assert pubmatic.usersync_enabled is False
    iframe = pubmatic.syncer.templates[IFRAME].render({})
    assert iframe.startswith("https://pm.example/i?r=https%3A%2F%2Fpbs.example%2Fsetuid%3Fbidder%3Dpubmatic")
    assert iframe.endswith("%26f%3Db%26uid%3DPM")
    assert pubmatic.syncer.templates[REDIRECT].render({}).startswith("https://image8.pubmatic.com/")


def test_aliases_share_or_own_a_sync_key():
    reg = registry(adapters={
        "anxalias": {"alias_of": "appnexus"},
        "mybidder": {"alias_of": "generic", "usersync": {"redirect": {"url": "https://b.test/s?r={{.RedirectURL}}",
                                                                       "user_macro": "$UID"}}},
    })
    alias, own = reg.lookup("anxalias"), reg.lookup("mybidder")
    assert (alias.adapter, alias.sync_key, alias.gvl_vendor_id) == ("appnexus", "adnxs", 32)
    assert "bidder%3Danxalias" in alias.syncer.templates[REDIRECT].render({})  # its own name in the redirect
    assert (own.adapter, own.sync_key, own.syncer.default_type) == ("generic", "mybidder", REDIRECT)


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ({"adapters": {"adf": {"usersync": {"redirect": {"url": "https://x/{{.Bad}}"}}}}},
         "adapters.adf.usersync.redirect.url: unknown macro {{.Bad}}"),
        ({"user_sync": {"redirect_url": "{{.ExternalURL}}/setuid?x={{.Oops}}"}},
         "user_sync.redirect_url: unknown macro {{.Oops}}"),
        ({"adapters": {"a1": {"alias_of": "generic", "usersync": {"key": "k", "redirect": {"url": "https://a/{{.RedirectURL}}"}}},
                       "a2": {"alias_of": "generic", "usersync": {"key": "k", "redirect": {"url": "https://b/{{.RedirectURL}}"}}}}},
         "adapters: bidders a1, a2 define different sync endpoints for the same key 'k'"),
    ],
)
def test_registry_problems_name_the_key(raw, problem):
    with pytest.raises(RegistryError) as caught:
        registry(**raw)
    assert caught.value.problems == [problem]
