import Testing
import TandemCore

/// Great-circle distance used by NEAR filters and `relativeLocation` sorts: haversine on a
/// sphere of radius 6,371,008.8 m.
@Suite struct LocationDistanceTests {
    static let metresPerDegree = 6_371_008.8 * Double.pi / 180

    @Test func samePointIsZeroMetresAway() {
        let p = Location(latitude: 37.3349, longitude: -122.00902)
        #expect(p.distance(to: p) == 0)
    }

    @Test func oneDegreeAlongTheEquatorOrAMeridian() {
        let origin = Location(latitude: 0, longitude: 0)
        #expect(abs(origin.distance(to: Location(latitude: 0, longitude: 1)) - Self.metresPerDegree) < 1e-6)
        #expect(abs(origin.distance(to: Location(latitude: 1, longitude: 0)) - Self.metresPerDegree) < 1e-6)
    }

    @Test func antipodesAreHalfACircumferenceApart() {
        let d = Location(latitude: 0, longitude: 0).distance(to: Location(latitude: 0, longitude: 180))
        #expect(abs(d - 6_371_008.8 * Double.pi) < 1e-3)
        let poles = Location(latitude: 90, longitude: 0).distance(to: Location(latitude: -90, longitude: 45))
        #expect(abs(poles - 6_371_008.8 * Double.pi) < 1e-3)
    }

    @Test func distanceIsSymmetricAndIgnoresAltitude() {
        let a = Location(latitude: 37.3349, longitude: -122.00902, altitude: 9000)
        let b = Location(latitude: 51.5007, longitude: -0.1246)
        #expect(a.distance(to: b) == b.distance(to: a))
        #expect(abs(a.distance(to: b) - 8_620_000) < 20_000)
    }

    @Test func crossingTheAntimeridianTakesTheShortWay() {
        let d = Location(latitude: 0, longitude: 179.5).distance(to: Location(latitude: 0, longitude: -179.5))
        #expect(abs(d - Self.metresPerDegree) < 1e-6)
    }
}
