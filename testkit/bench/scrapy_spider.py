# A Scrapy spider walking follower lists page after page, as the crawler's
# tasks do: the peer workload 20 compares the crawler's concurrency control
# with (bench/scrapy.go). Arguments: base URL (with /api), key, number of
# lists, seconds to run, and "defaults" or "autothrottle". It prints the
# pages it got and the 429s as JSON on its last line.
import json
import sys

import scrapy
from scrapy.crawler import CrawlerProcess

base, key, lists, seconds, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
counts = {"pages": 0, "throttled": 0, "errors": 0}


def sec_uid(i):
    import base64

    handle = "scrapy%04d_f1000000_g0" % i
    return "MS4wLjABAAAA" + base64.urlsafe_b64encode(handle.encode()).decode().rstrip("=")


class Lists(scrapy.Spider):
    name = "lists"
    handle_httpstatus_list = [429, 500, 502, 503, 504]

    def page(self, uid, cursor):
        url = base + "/shortvideo/user/followers?secUid=" + uid
        if cursor:
            url += "&cursor=" + cursor
        return scrapy.Request(url, headers={"x-api-key": key}, cb_kwargs={"uid": uid, "cursor": cursor}, dont_filter=True)

    def start_requests(self):
        for i in range(lists):
            yield self.page(sec_uid(i), "")

    def parse(self, response, uid, cursor):
        if response.status == 429:
            counts["throttled"] += 1
            yield self.page(uid, cursor)  # the same page again
            return
        if response.status >= 500:
            counts["errors"] += 1
            yield self.page(uid, cursor)
            return
        counts["pages"] += 1
        body = json.loads(response.text)
        nxt = body.get("cursor")
        if body.get("hasMore") and nxt not in (None, ""):
            yield self.page(uid, str(nxt))


settings = {"LOG_LEVEL": "ERROR", "CLOSESPIDER_TIMEOUT": seconds, "ROBOTSTXT_OBEY": False, "TELNETCONSOLE_ENABLED": False}
if mode == "autothrottle":
    settings["AUTOTHROTTLE_ENABLED"] = True
process = CrawlerProcess(settings)
process.crawl(Lists)
process.start()
print(json.dumps(counts))
