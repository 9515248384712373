package io.github.deltalifecycle.features.redirect

import org.apache.spark.sql.delta.actions.{Metadata, Protocol}

/**
 * Adds and removes a redirect feature and property. delta-spark's own protocol helpers take only
 * features from its registry, so the names are edited here; legacy protocols are first written out
 * as the table features they imply.
 */
object RedirectProtocol {
  def withFeature(p: Protocol, mode: RedirectMode): Protocol = {
    val implied = p.implicitlySupportedFeatures
    val writers = p.writerFeatureNames ++ implied.map(_.name) + mode.feature
    if (mode.readerWriter) {
      val readers = p.readerFeatureNames ++ implied.filter(_.isReaderWriterFeature).map(_.name) +
        mode.feature
      Protocol(3, 7, Some(readers), Some(writers))
    } else {
      // A writer-only feature leaves readers alone: the reader version and list stay as they are.
      Protocol(p.minReaderVersion, 7, p.readerFeatures, Some(writers))
    }
  }

  def withoutFeatures(p: Protocol): Protocol = p.copy(
    readerFeatures = p.readerFeatures.map(_ -- RedirectMode.featureNames),
    writerFeatures = p.writerFeatures.map(_ -- RedirectMode.featureNames)
  )

  def withProperty(m: Metadata, config: RedirectConfig): Metadata =
    m.copy(configuration =
      withoutProperty(m).configuration + (config.mode.property -> config.toJson)
    )

  def withoutProperty(m: Metadata): Metadata = m.copy(configuration = m.configuration.filterNot {
    case (k, _) => RedirectMode.featureNames.exists(f => k == "delta." + f)
  })
}
